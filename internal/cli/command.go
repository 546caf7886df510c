package cli

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// The command tree is built from verbs(), the one list of verbs: a one-word
// name is a command of the root, a two-word name ("dev fake-github") a
// subcommand of a parent made for its first word. Cobra gives the tree the
// gh CLI's habits (help for every command, `help VERB`, --version, shell
// completion); each verb still parses its own flags (DisableFlagParsing,
// parseFlags in flags.go: single-dash long flags and old names are read
// there), so no verb file depends on cobra. For shell completion the verbs'
// flag sets are also registered on their commands, where cobra's
// `__complete` offers them.

// run runs the command line env.Args.
func run(ctx context.Context, env *Env) int {
	code := ExitOK
	args := make([]string, len(env.Args)) // non-nil: cobra reads os.Args for nil
	copy(args, env.Args)
	completing := len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd)
	root := newRoot(ctx, env, &code, completing)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		// cobra's own errors (a flag of the root, of a parent or of
		// completion) name no verb; a flag error carries its command, so
		// the line names it once, as a verb's own flag error does.
		see := "roadmap"
		var fe *flagError
		if errors.As(err, &fe) {
			see = fe.path
			env.verb = strings.TrimPrefix(strings.TrimPrefix(fe.path, "roadmap"), " ")
			err = fe.err
		}
		env.Errorf("%v (see '%s --help')", err, see)
		return ExitUsage
	}
	return code
}

// flagError is a flag error of a command cobra parses (the root, a parent,
// completion) with the command's path ("roadmap dev"). Errorf adds the
// "roadmap dev: " prefix; the error's text must not hold it too, or the
// line would read "roadmap: roadmap dev: unknown flag".
type flagError struct {
	path string
	err  error
}

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

// newRoot builds the command tree; with flags, each verb's flag set is
// registered on its command (shell completion asks for them).
func newRoot(ctx context.Context, env *Env, code *int, flags bool) *cobra.Command {
	root := &cobra.Command{
		Use:   "roadmap",
		Short: "turn GitHub issues into reviewed, tested pull requests",
		Long: "roadmap turns GitHub issues into reviewed, tested pull requests, in GitHub Actions.\n\n" +
			exitCodesLine,
		Version:       versionText(),
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		// A bare `roadmap` prints the help and exits 2, as it always has;
		// an unknown command names the known ones.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				*code = ExitUsage
				return cmd.Help()
			}
			*code = ExitUsage
			env.Errorf("unknown command %q; the commands are: %s (see 'roadmap --help')", args[0], strings.Join(childNames(cmd), ", "))
			return nil
		},
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetVersionTemplate("roadmap {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &flagError{path: cmd.CommandPath(), err: err}
	})

	parents := map[string]*cobra.Command{}
	for _, v := range verbs() {
		parent, leaf := root, v.name
		if first, rest, two := strings.Cut(v.name, " "); two {
			parent, leaf = parents[first], rest
			if parent == nil {
				parent = newParent(env, first, code)
				parents[first] = parent
				root.AddCommand(parent)
			}
		}
		c := newLeaf(ctx, env, v, leaf, code)
		if flags {
			if fs := verbFlags(v); fs != nil {
				c.Flags().AddFlagSet(fs)
			}
		}
		parent.AddCommand(c)
	}
	for _, p := range parents {
		p.Short = summaryOf(p)
	}
	return root
}

// newLeaf is the command of one verb. Its arguments, flags and --help
// included, go to the verb's run function as they were typed; `roadmap help
// VERB` is `roadmap VERB --help`.
func newLeaf(ctx context.Context, env *Env, v verb, leaf string, code *int) *cobra.Command {
	c := &cobra.Command{
		Use:                leaf,
		Short:              v.summary,
		DisableFlagParsing: true,
		SilenceErrors:      true,
		SilenceUsage:       true,
		RunE: func(cmd *cobra.Command, args []string) error {
			*code = env.runVerb(ctx, v, args)
			return nil
		},
	}
	c.SetHelpFunc(func(*cobra.Command, []string) {
		*code = env.runVerb(ctx, v, []string{"--help"})
	})
	return c
}

// newParent is the command for the first word of two-word verbs ("dev"):
// alone it lists its subcommands; with an unknown one it names the known.
func newParent(env *Env, name string, code *int) *cobra.Command {
	return &cobra.Command{
		Use:           name,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			*code = ExitUsage
			env.Errorf("unknown command %q for 'roadmap %s'; its commands are: %s (see 'roadmap %s --help')",
				args[0], name, strings.Join(childNames(cmd), ", "), name)
			return nil
		},
	}
}

// childNames lists a command's subcommands that a person can run, sorted.
func childNames(c *cobra.Command) []string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	sort.Strings(names)
	return names
}

func summaryOf(parent *cobra.Command) string {
	return parent.Name() + " commands: " + strings.Join(childNames(parent), ", ")
}

// versionText is what --version and `roadmap version` print after "roadmap ".
func versionText() string {
	return currentBuild().String()
}

// errNoAuth is gitHubClient's error when no token is found.
var errNoAuth = errors.New("no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or log in with 'gh auth login'")
