package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

const trackerToken = "ghs_trackerclitoken0000000000000000000000"

// TestTrackerStatusCLI runs `roadmap tracker status` in-process against the
// fake GitHub over HTTP: its exit codes, its output and its --json.
func TestTrackerStatusCLI(t *testing.T) {
	fake := githubfake.New(githubfake.Options{Token: trackerToken, Owner: "acme", Repo: "widgets"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	environ := []string{"GITHUB_TOKEN=" + trackerToken, "GITHUB_API_URL=" + srv.URL, "GITHUB_REPOSITORY=acme/widgets"}
	cmd := func(environ []string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"tracker", "status"}, args...), environ, strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	issue := func(title string) int { return fake.CreateIssue(githubfake.Issue{Title: title}) }

	// An open tracker: one done child, one open under a nested tracker,
	// one dropped; a title carries the token, which must not be printed.
	open := issue("epic")
	done, feature, leaf, dropped := issue("done"), issue("feature"), issue("the last task "+trackerToken), issue("not planned")
	for _, l := range [][2]int{{open, done}, {open, feature}, {feature, leaf}, {open, dropped}} {
		if err := fake.AddSubIssue(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	fake.CloseIssue(done, "completed")
	fake.CloseIssue(feature, "completed")
	fake.CloseIssue(dropped, "not_planned")
	// A complete tracker, its children in its task list.
	a, b := issue("a"), issue("b")
	fake.CloseIssue(a, "completed")
	fake.CloseIssue(b, "duplicate")
	complete := fake.CreateIssue(githubfake.Issue{Title: "all done", Body: fmt.Sprintf("- [x] #%d\n- [x] #%d\n", a, b)})

	t.Run("an open child: exit 1, named with its path", func(t *testing.T) {
		code, stdout, stderr := cmd(environ, strconv.Itoa(open))
		if code != ExitFindings {
			t.Fatalf("exit %d, want %d\n%s%s", code, ExitFindings, stdout, stderr)
		}
		for _, want := range []string{
			fmt.Sprintf("done          #%d", done), fmt.Sprintf("dropped       #%d", dropped),
			fmt.Sprintf("open          #%d", leaf), fmt.Sprintf("(via #%d → #%d)", open, feature),
			fmt.Sprintf("not complete: open #%d → #%d", feature, leaf),
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		}
		if strings.Contains(stdout+stderr, trackerToken) {
			t.Errorf("the token reached the output:\n%s%s", stdout, stderr)
		}
	})

	t.Run("--json has the stable fields", func(t *testing.T) {
		code, stdout, stderr := cmd(environ, "#"+strconv.Itoa(open), "--json")
		if code != ExitFindings {
			t.Fatalf("exit %d, want %d\n%s", code, ExitFindings, stderr)
		}
		var got struct {
			Issue    int  `json:"issue"`
			Complete bool `json:"complete"`
			Children []struct {
				Number int      `json:"number"`
				Repo   string   `json:"repo"`
				Title  string   `json:"title"`
				State  string   `json:"state"`
				Path   []string `json:"path"`
			} `json:"children"`
			Open, Dropped, Done, Unverifiable, Requests *int
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, stdout)
		}
		if got.Issue != open || got.Complete || got.Open == nil || *got.Open != 1 || *got.Dropped != 1 || *got.Done != 2 ||
			*got.Unverifiable != 0 || *got.Requests != 3 {
			t.Errorf("issue %d complete %v open %v dropped %v done %v unverifiable %v requests %v", got.Issue, got.Complete,
				got.Open, got.Dropped, got.Done, got.Unverifiable, got.Requests)
		}
		var paths []string
		for _, c := range got.Children {
			if c.Repo != "acme/widgets" {
				t.Errorf("child #%d repo %q", c.Number, c.Repo)
			}
			paths = append(paths, c.State+" "+strings.Join(c.Path, ">"))
		}
		want := []string{fmt.Sprintf("done #%d>#%d", open, done), fmt.Sprintf("done #%d>#%d", open, feature),
			fmt.Sprintf("open #%d>#%d>#%d", open, feature, leaf), fmt.Sprintf("dropped #%d>#%d", open, dropped)}
		if diff := cmp.Diff(want, paths); diff != "" {
			t.Errorf("children (-want +got):\n%s", diff)
		}
		if strings.Contains(stdout, trackerToken) {
			t.Errorf("the token reached the JSON")
		}
	})

	t.Run("complete: exit 0", func(t *testing.T) {
		code, stdout, stderr := cmd(environ, strconv.Itoa(complete))
		if code != ExitOK || !strings.Contains(stdout, "complete: no child is open") {
			t.Errorf("exit %d, want 0\n%s%s", code, stdout, stderr)
		}
	})

	t.Run("no such issue: exit 2", func(t *testing.T) {
		if code, _, stderr := cmd(environ, "999"); code != ExitUsage {
			t.Errorf("exit %d, want %d\n%s", code, ExitUsage, stderr)
		}
	})

	t.Run("not an issue number: exit 2", func(t *testing.T) {
		if code, _, stderr := cmd(environ, "abc"); code != ExitUsage || !strings.Contains(stderr, `"abc" is not an issue number`) {
			t.Errorf("exit %d, want %d\n%s", code, ExitUsage, stderr)
		}
	})

	t.Run("GitHub fails: exit 3", func(t *testing.T) {
		fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/*/*/issues/*/sub_issues", Status: 410})
		defer fake.ClearFaults()
		if code, _, stderr := cmd(environ, strconv.Itoa(open)); code != ExitInternal {
			t.Errorf("exit %d, want %d\n%s", code, ExitInternal, stderr)
		}
	})

	t.Run("no login: exit 4", func(t *testing.T) {
		var out, errb bytes.Buffer
		env := newEnv([]string{"tracker", "status", strconv.Itoa(open)}, []string{"GITHUB_API_URL=" + srv.URL, "GITHUB_REPOSITORY=acme/widgets"},
			strings.NewReader(""), &out, &errb)
		env.ghAuthToken = func(context.Context) (string, error) { return "", errors.New("gh: not logged in") }
		if code := run(context.Background(), env); code != ExitAuth {
			t.Errorf("exit %d, want %d", code, ExitAuth)
		}
	})
}
