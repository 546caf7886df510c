package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// TestE2EPinnedCallerRunsPinnedCode: a caller that pins roadmap by commit
// SHA (docs/install.md, "A pin pins everything") runs that commit's actions,
// scripts and binary, though v1 has moved on to a commit whose every script
// fails. The reusable workflow learns the commit from the OIDC token the
// fake GitHub issues to its pin job (job_workflow_sha, resolved from the
// caller's `uses:`), checks roadmap out at it, and builds the binary from
// it; nothing is taken from the tag. The item goes from an issue with no
// plan to a ready PR.
func TestE2EPinnedCallerRunsPinnedCode(t *testing.T) {
	act := requireAct(t)
	it := newItem(t, act, itemOptions{Latency: 20 * time.Millisecond, WatchTimeout: 30 * time.Second, FromIssue: true, Pinned: true})
	it.playCI("success")
	it.baselinePushes()
	alice := it.person("alice", "admin")
	sha := it.pinnedSHA(t)

	alice.label(it.w.Issue, "roadmap:stage")
	stage := it.nextRun("stage", it.workflowFile(), "issues", nil)
	if got := stage.Jobs[stage.job("stage")]; got != "success" {
		t.Fatalf("the stage run: stage job %q (jobs %v)\n%s", got, stage.Jobs, stage.Log)
	}
	built := it.checkPinned("stage", stage.actRun, sha, "stage", "report")
	rec := it.record()
	if st, _ := rec.StageState(); st != "staged" {
		t.Fatalf("stage.state = %q, want staged:\n%s", st, recordText(rec))
	}
	it.staged = it.w.Replay.Stats().Calls

	alice.label(it.w.Issue, "roadmap:implement")
	impl := it.nextRun("implement", it.workflowFile(), "issues", nil)
	it.wantJobs(impl.actRun, "success", "success")
	if it.checkPinned("implement", impl.actRun, sha, "implement", "report") {
		built = true
	}
	if !built {
		t.Error("no run built roadmap from the pinned commit: every install came from the tool cache, so the build's stamp went unchecked")
	}
	rec = it.record()
	if res, _ := rec.Result(); res != record.ResultReady {
		t.Fatalf("implement.result = %q, want ready:\n%s", res, recordText(rec))
	}
	pr, _ := rec.StagePR()
	it.checkReadyPR(pr)
}

// pinnedSHA is the commit the pinned caller names: the one act maps
// roadmap-dev/roadmap@<sha> to.
func (it *item) pinnedSHA(t *testing.T) string {
	t.Helper()
	for k, dir := range it.local {
		if sha, ok := strings.CutPrefix(k, "roadmap-dev/roadmap@"); ok && dir == it.roadmap && shaLike(sha) {
			return sha
		}
	}
	t.Fatal("the pinned caller's commit is not mapped")
	return ""
}

func shaLike(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// checkPinned: the run's pin job named the pinned commit, every job that
// runs roadmap built it from that commit, and nothing of the moved tag ran.
// It reports whether the run built the binary (rather than taking the build
// from the tool cache).
func (it *item) checkPinned(name string, r *actRun, sha string, jobs ...string) bool {
	t := it.t
	t.Helper()
	if got := r.Jobs[r.job("pin")]; got != "success" {
		t.Errorf("%s: the pin job %q, want success (jobs %v)", name, got, r.Jobs)
	}
	if want := "roadmap: roadmap-dev/roadmap at " + sha; !strings.Contains(r.Log, want) {
		t.Errorf("%s: the pin job's log lacks %q", name, want)
	}
	if strings.Contains(r.Log, movedTag) {
		t.Errorf("%s: a script of the moved v1 ran:\n%s", name, grepLines(r.Log, movedTag))
	}
	// Each job that runs roadmap installs it at the pinned commit: built
	// from that commit's source, or that build from the runner's tool cache.
	builds := grepLines(r.Log, "roadmap built from source at ref '"+sha+"'")
	installs := strings.Count(r.Log, "roadmap built from source at ref '"+sha+"'") +
		strings.Count(r.Log, "roadmap "+sha+" (built from source earlier) from the tool cache")
	if installs < len(jobs) {
		t.Errorf("%s: %d installs of roadmap at the pinned %s, want one per job %v:\n%s", name, installs, sha, jobs, grepLines(r.Log, "roadmap"))
	}
	for _, l := range strings.Split(builds, "\n") {
		if l != "" && !strings.Contains(l, "("+sha+")") {
			t.Errorf("%s: the built binary's version does not name the pinned commit %s: %s", name, sha, l)
		}
	}
	return builds != ""
}

// grepLines returns log's lines holding s.
func grepLines(log, s string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
