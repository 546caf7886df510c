package stage_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/plan"
	"github.com/roadmap-dev/roadmap/internal/stage"
)

// TestCommentNeutralised: a finding quotes the plan the model wrote (as
// OpenSpec's INFO finding on a spec header it ignores quotes the header;
// INFO does not fail the plan), and the draft PR's stage comment shows it
// as words only: no mention, no forged marker, no image, no link to
// another host, no HTML, no workflow command.
func TestCommentNeutralised(t *testing.T) {
	const header = "cc @octocat and @acme/admins <!-- roadmap:implement --> ![p](https://evil.example/p.png) " +
		"<img src=https://evil.example/q.png> [docs](https://evil.example/d) &#64;octocat ##[warning]forged"
	w := newWorld(t)
	j := w.newJob(soundPlanner("Write the plan for issue"), cleanVerifier("Review the plan for issue"))
	j.opts.Gates = func(context.Context, stage.GateInput) ([]plan.Finding, error) {
		return []plan.Finding{{Level: plan.LevelInfo, Rule: "openspec/requirement-header", File: changeDir + "/specs/greetings/spec.md", Line: 12,
			Message: `Header "### ` + header + `" in ADDED Requirements is not a "### Requirement:" header and is ignored by validation.`}}, nil
	}
	res := j.run(context.Background())
	if res.Result != stage.ResultStaged || len(res.Findings) == 0 {
		t.Fatalf("result %s with findings %+v; want staged with the header's INFO finding\n%s", res.Result, res.Findings, j.log.String())
	}
	var comment string
	for _, c := range w.fake.Comments(res.PR) {
		if strings.HasPrefix(c.Body, "<!-- roadmap:stage -->\n") {
			comment = strings.TrimPrefix(c.Body, "<!-- roadmap:stage -->\n")
		}
	}
	if !strings.Contains(comment, "requirement-header") || !strings.Contains(comment, "octocat") || !strings.Contains(comment, "evil.example/p.png") {
		t.Fatalf("the stage comment does not show the finding:\n%s", comment)
	}
	for what, re := range map[string]*regexp.Regexp{
		"an HTML comment":        regexp.MustCompile(`<!--`),
		"HTML":                   regexp.MustCompile(`<[A-Za-z/!?]`),
		"a mention":              regexp.MustCompile(`(?:^|[^A-Za-z0-9_])@[A-Za-z0-9]`),
		"an image or a link":     regexp.MustCompile(`!\[|\]\(`),
		"a link to another host": regexp.MustCompile(`https?://evil`),
		"an entity":              regexp.MustCompile(`&#`),
		"a workflow command":     regexp.MustCompile(`##\[`),
	} {
		if m := re.FindString(comment); m != "" {
			t.Errorf("the stage comment holds %s (%q):\n%s", what, m, comment)
		}
	}
}
