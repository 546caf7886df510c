package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/failure"
)

// conclusions are the values GitHub gives a job's conclusion.
var conclusions = []string{"success", "failure", "cancelled", "timed_out", "skipped", "neutral", "action_required", "stale"}

// classifyOutput is what `roadmap classify --json` prints. Field names are stable.
type classifyOutput struct {
	Class     failure.Class  `json:"class"`
	Reason    string         `json:"reason"`
	Evidence  string         `json:"evidence"`
	Line      int            `json:"line"`
	Source    failure.Source `json:"source"`
	Action    failure.Action `json:"action"`
	Does      string         `json:"does"`
	Result    failure.Result `json:"result"`
	Automatic bool           `json:"automatic"`
	Stop      bool           `json:"stop"`
}

// classifyOptions are `roadmap classify`'s flags, parsed: Input is what
// failure.Classify reads, its Log not yet opened.
type classifyOptions struct {
	Log   string
	Input failure.Input
	JSON  bool
}

// runClassify classifies a failed Job from its saved log. The verdict is data:
// the command exits 0 whatever the class, and 2 when the input is wrong.
func runClassify(ctx context.Context, env *Env, args []string) int {
	return classifyCmd(ctx, env.factory(), args, classifyRun)
}

// classifyCmd parses classify's flags into its options, then calls runF.
func classifyCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *classifyOptions) int) int {
	env, o := f.env, &classifyOptions{}
	fs := newFlags(env, "classify")
	fs.StringVar(&o.Log, "log", "", "the job log `FILE` to classify (- for stdin)")
	fs.StringVar(&o.Input.Conclusion, "conclusion", "", "the job's `conclusion`: "+strings.Join(conclusions, ", "))
	exitCode := fs.String("exit-code", "", "the failed step's exit `code`, when known")
	fs.StringArrayVar(&o.Input.Annotations, "annotation", nil, "a check-run annotation `message` of the job (repeatable); a lost runner is often named only there")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		env.Errorf("classify takes no arguments; the log is --log FILE")
		return ExitUsage
	case o.Log == "":
		env.Errorf("classify needs --log FILE (- for stdin)")
		return ExitUsage
	case o.Input.Conclusion != "" && !slices.Contains(conclusions, o.Input.Conclusion):
		env.Errorf("--conclusion %q: want one of %s", o.Input.Conclusion, strings.Join(conclusions, ", "))
		return ExitUsage
	}
	if *exitCode != "" {
		n, err := strconv.Atoi(*exitCode)
		if err != nil || n < 0 || n > 255 {
			env.Errorf("--exit-code %q: want a number from 0 to 255", *exitCode)
			return ExitUsage
		}
		o.Input.ExitCode = &n
	}
	return runF(ctx, f, o)
}

// classifyRun reads the log and prints the verdict.
func classifyRun(_ context.Context, f *Factory, o *classifyOptions) int {
	env, in := f.env, o.Input
	in.Log = env.Stdin
	if o.Log != "-" {
		file, err := os.Open(o.Log)
		if err != nil {
			env.Errorf("classify: open log: %v", err)
			return ExitUsage
		}
		defer file.Close()
		in.Log = file
	}
	v := failure.Classify(in)
	if v.LogErr != nil {
		env.Errorf("classify %s: %v", o.Log, v.LogErr)
		return ExitUsage
	}
	// The evidence is masked: a person may paste what classify prints
	// into an issue.
	row := v.Row()
	out := classifyOutput{
		Class: v.Class, Reason: v.Reason, Evidence: f.Masker().Mask(v.Evidence), Line: v.Line, Source: v.Source,
		Action: row.Action, Does: row.Does, Result: row.Result, Automatic: row.Automatic, Stop: row.Stop,
	}
	if o.JSON {
		return env.JSON(out)
	}
	printVerdict(env.Stdout, out, in)
	return ExitOK
}

func printVerdict(w io.Writer, o classifyOutput, in failure.Input) {
	class := string(o.Class)
	if o.Reason != "" {
		class += " (" + o.Reason + ")"
	}
	fmt.Fprintf(w, "class:     %s\n", class)
	fmt.Fprintf(w, "action:    %s: %s\n", o.Action, o.Does)
	how := "automatic"
	if !o.Automatic {
		how = "needs a person"
	}
	if o.Stop {
		how += ", stops the item"
	}
	fmt.Fprintf(w, "result:    %s (%s)\n", o.Result, how)
	switch o.Source {
	case failure.SourceLog, failure.SourceRunnerLine:
		fmt.Fprintf(w, "evidence:  line %d: %s\n", o.Line, actionsio.PlainLine(o.Evidence))
	case failure.SourceAnnotation:
		fmt.Fprintf(w, "evidence:  annotation: %s\n", actionsio.PlainLine(o.Evidence))
	case failure.SourceConclusion:
		fmt.Fprintf(w, "evidence:  the job's conclusion, %s\n", in.Conclusion)
	case failure.SourceExitCode:
		fmt.Fprintf(w, "evidence:  exit code %d\n", *in.ExitCode)
	default:
		fmt.Fprintf(w, "evidence:  none\n")
	}
}
