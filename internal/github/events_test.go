package github

import (
	"context"
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
