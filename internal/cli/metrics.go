package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/roadmap-dev/roadmap/internal/actionsio"
	"github.com/roadmap-dev/roadmap/internal/items"
	"github.com/roadmap-dev/roadmap/internal/metrics"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
	txt "github.com/roadmap-dev/roadmap/internal/text"
)

// metricsOutput is `roadmap metrics --json`: the report, the counted GitHub
// requests this command made, and the records left out.
type metricsOutput struct {
	metrics.Report
	// Requests is the counted requests this command made (the report's
	// job_requests are the Jobs').
	Requests int `json:"requests"`
	// Skipped names record comments that do not parse (left out).
	Skipped []string `json:"skipped,omitempty"`
}

// metricsOptions are `roadmap metrics`'s flags, parsed.
type metricsOptions struct {
	Since, Now time.Time
	JSON       bool
}

// runMetrics is `roadmap metrics [--json] [--since D] [-R OWNER/REPO]`: the
// pipeline's outcomes across items (internal/metrics), from every record
// comment updated since D, read with one request per 100 comments. Exit 0,
// 2 on bad input, 3 when GitHub fails it.
func runMetrics(ctx context.Context, env *Env, args []string) int {
	return metricsCmd(ctx, env.factory(), args, metricsRun)
}

// metricsCmd parses metrics' flags into its options, then calls runF.
func metricsCmd(ctx context.Context, f *Factory, args []string, runF func(context.Context, *Factory, *metricsOptions) int) int {
	env, o := f.env, &metricsOptions{}
	fs := newFlags(env, "metrics")
	sinceFlag := fs.String("since", "30d", "the window's start: a date `D` (YYYY-MM-DD, UTC), a duration back from now (7d, 24h), or all")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object")
	repoFlag(fs, env)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		env.Errorf("metrics takes no arguments")
		return ExitUsage
	}
	o.Now = f.Now().UTC()
	var err error
	if o.Since, err = parseSince(*sinceFlag, o.Now); err != nil {
		env.Errorf("--since: %v", err)
		return ExitUsage
	}
	return runF(ctx, f, o)
}

// metricsRun reads the records of the window and prints the report.
func metricsRun(ctx context.Context, f *Factory, o *metricsOptions) int {
	env := f.env
	gh, err := f.GitHub()
	if err != nil {
		env.Errorf("%v", err)
		return ExitUsage
	}
	masker := f.Masker()
	recs, err := recordstore.Records(ctx, gh, o.Since)
	if err != nil {
		env.Errorf("%s", masker.Mask(err.Error()))
		return ExitInternal
	}
	out := metricsOutput{}
	list := make([]items.Item, 0, len(recs))
	for _, ir := range recs {
		if ir.Record == nil {
			out.Skipped = append(out.Skipped, masker.Mask(ir.Problem))
			continue
		}
		// The title is not needed: no figure names an item.
		list = append(list, items.Of(ir.Issue, "", ir.Record))
	}
	for _, p := range out.Skipped {
		env.Errorf("left out: %s", p)
	}
	out.Report = metrics.Compute(list, o.Since, o.Now)
	out.Requests = gh.Requests().Counted()
	if o.JSON {
		return env.JSON(out)
	}
	if err := printMetrics(env.Stdout, out); err != nil {
		env.Errorf("write: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// parseSince reads --since: "all" (zero: no start), a date YYYY-MM-DD in
// UTC, or a duration back from now in days (7d) or as Go writes them (24h).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "all" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if t.After(now) {
			return time.Time{}, fmt.Errorf("%s is in the future", s)
		}
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD), a duration (7d, 24h) or all", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD), a duration (7d, 24h) or all", s)
		}
	}
	if d <= 0 {
		return time.Time{}, errors.New("a duration back from now is positive")
	}
	return now.Add(-d), nil
}

// printMetrics writes the report for a person. Nothing in it is an issue's
// title; the classes are the record's failure words, made plain anyway.
func printMetrics(w io.Writer, o metricsOutput) error {
	ew := &errWriter{w: w}
	window := "all time"
	if !o.Since.IsZero() {
		window = "since " + o.Since.Format("2006-01-02 15:04") + " UTC"
	}
	fmt.Fprintf(ew, "roadmap metrics: %d items with a Job %s\n\n", o.Items, window)
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tITEMS")
	for _, s := range items.States {
		fmt.Fprintf(tw, "%s\t%d\n", s, o.ByState[s])
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "success rate\t%s (%d ready of %d ended)\n", percent(o.SuccessRate), o.ByState[items.Ready], o.Ended)
	fmt.Fprintf(tw, "median implement Jobs\t%s\n", number(o.MedianImplementJobs))
	str := "-"
	if o.MedianStageToReadySeconds != nil {
		str = (time.Duration(*o.MedianStageToReadySeconds) * time.Second).String()
	}
	fmt.Fprintf(tw, "median stage to ready\t%s (%d items)\n", str, o.StageToReadyItems)
	fmt.Fprintf(tw, "total spend\t%s (in the window %s)\n", txt.USD(o.TotalSpend.USD), txt.USD(o.WindowSpend.USD))
	per := "-"
	if o.SpendPerReadyUSD != nil {
		per = txt.USD(*o.SpendPerReadyUSD)
	}
	fmt.Fprintf(tw, "spend per ready item\t%s\n", per)
	fmt.Fprintf(tw, "continuation rate\t%s (%d of %d implement Jobs)\n", percent(o.ContinuationRate), o.Continuations, o.ImplementJobs)
	fmt.Fprintf(tw, "GitHub requests by the Jobs\t%d (%s per item), as their record lines count them\n", o.JobRequests, number(o.RequestsPerItem))
	fmt.Fprintf(tw, "time blocked\t%s (%d items waited for their blockers)\n",
		(time.Duration(o.BlockedSeconds) * time.Second).String(), o.BlockedItems)
	classes := make([]string, 0, len(o.StopsByClass))
	for c := range o.StopsByClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	stops := make([]string, 0, len(classes))
	for _, c := range classes {
		stops = append(stops, fmt.Sprintf("%s %d", actionsio.PlainLine(c), o.StopsByClass[c]))
	}
	if len(stops) == 0 {
		stops = append(stops, "none")
	}
	fmt.Fprintf(tw, "stops by class\t%s\n", strings.Join(stops, ", "))
	fmt.Fprintf(tw, "GitHub requests by this command\t%d\n", o.Requests)
	tw.Flush()
	return ew.err
}

func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}

func number(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
