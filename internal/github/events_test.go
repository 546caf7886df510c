package github

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
)

// TestRecoveryReported: each retry of a transient failure is reported, with
// the endpoint and the attempt that follows; with NoRetry there is none, and
// the 502 reaches the caller.
func TestRecoveryReported(t *testing.T) {
	for _, noRetry := range []bool{false, true} {
		var got []Recovery
		e := newEnv(t, githubfake.Options{}, func(o *Options) {
			o.OnRecovery = func(r Recovery) { got = append(got, r) }
			o.NoRetry = noRetry
		})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "b", Author: "alice"})
		e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/*/*/issues/*", Call: 1, Status: 502})
		_, err := e.c.Issue(context.Background(), n)
		if noRetry {
			if err == nil || len(got) != 0 {
				t.Errorf("NoRetry: err %v, recoveries %v; want the 502 and none", err, got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("read the issue: %v", err)
		}
		if len(got) != 1 || got[0].Kind != RecoverRetry || got[0].Attempt != 2 || got[0].Reason != "502" {
			t.Errorf("recoveries %+v, want one retry (attempt 2, after 502)", got)
		}
	}
}

// TestRecoveryLineNamesRepository: the log line of a retry names the
// request as it was sent, the repository and the issue in it, not the
// endpoint's template; it is a plain "roadmap: " line with no "::" a
// reader could take for a workflow command. A branch reported by a
// caller's protocol (Client.Recovered) names the repository too.
func TestRecoveryLineNamesRepository(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, githubfake.Options{Owner: "octo-org", Repo: "gizmos"}, func(o *Options) {
		o.Owner, o.Repo = "octo-org", "gizmos"
		o.OnRecovery = LogRecoveries(&log)
	})
	n := e.fake.CreateIssue(githubfake.Issue{Title: "t", Body: "b", Author: "alice"})
	e.fake.AddFault(githubfake.Rule{Method: "GET", Path: "/repos/*/*/issues/*", Call: 1, Status: 502})
	if _, err := e.c.Issue(context.Background(), n); err != nil {
		t.Fatalf("read the issue: %v", err)
	}
	e.c.Recovered(Recovery{Kind: RecoverRecordReapply, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: 2, Reason: "the comment is gone"})
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	want := []string{
		fmt.Sprintf("roadmap: github recovery: retry GET /repos/octo-org/gizmos/issues/%d: attempt 2 after 502, wait ", n),
		fmt.Sprintf("roadmap: github recovery: reapply_record octo-org/gizmos issue %d record: attempt 2 after the comment is gone", n),
	}
	if len(lines) != len(want) {
		t.Fatalf("the log has %d lines, want %d:\n%s", len(lines), len(want), log.String())
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) {
			t.Errorf("line %d is %q, want it to start %q", i+1, l, want[i])
		}
		if strings.Contains(l, "{owner}") || strings.Contains(l, "{repo}") || strings.Contains(l, "::") {
			t.Errorf("line %d holds the path template or a \"::\": %q", i+1, l)
		}
		if !strings.HasPrefix(l, RecoveryPrefix) {
			t.Errorf("line %d does not start with RecoveryPrefix %q: %q", i+1, RecoveryPrefix, l)
		}
	}
}
