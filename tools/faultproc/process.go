package faultproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/roadmap-dev/roadmap/internal/faults"
	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/llm"
	"github.com/roadmap-dev/roadmap/internal/record"
	"github.com/roadmap-dev/roadmap/internal/report"
	theworld "github.com/roadmap-dev/roadmap/internal/world"
)

// ProcessOptions tune `roadmap faults run --process`: real roadmap
// processes (implement, report, the continuations report dispatches) run as
// a workflow's steps run them, and the suite faults them from outside.
type ProcessOptions struct {
	// Binary is the roadmap executable every step runs.
	Binary string
	// Sample, when above 0, plays that many histories of the kinds not
	// pending, spread over the sweep; 0 plays the whole sweep.
	Sample int
	// Pending also plays the kinds that wait on a mend (their violations
	// are listed, not counted; one that no longer shows is a violation).
	Pending bool
	// Cover plays one history of every kind not pending, chosen by Key, and
	// Sample more chosen by Key (the per-change sample, docs/testing.md).
	Cover bool
	// Key turns the cover's choice (CI passes the commit).
	Key string
	// Only, when set, keeps the histories whose name or kind contains it.
	Only     string
	Dir      string
	Progress io.Writer
}

// Print writes the summary for a person.
func (s *ProcessSummary) Print(w io.Writer) {
	fmt.Fprintf(w, "fault injection from outside: %d histories of real processes, %.0f s\n", s.Histories, s.Seconds)
	fmt.Fprintf(w, "%-34s %8s %9s\n", "kind", "injected", "recovered")
	for _, k := range slices.Sorted(maps.Keys(s.ByKind)) {
		fmt.Fprintf(w, "%-34s %8d %9d\n", k, s.ByKind[k].Injected, s.ByKind[k].Recovered)
	}
	fmt.Fprintf(w, "kill points %d, faults %d, recovered histories %d\n", s.KillPoints, s.Faults, s.Recovered)
	fmt.Fprintf(w, "work repeated %d, spend lost %d tokens, duplicate effects %d, stuck items %d, violations %d\n",
		s.WorkRepeated, s.SpendLost, s.Duplicates, s.Stuck, len(s.Violations))
	for _, v := range s.Violations {
		fmt.Fprintf(w, "VIOLATION %s\n", v)
	}
	for _, k := range s.Skipped {
		fmt.Fprintf(w, "skipped (pending a mend): %s\n", k)
	}
	for _, k := range s.PendingFound {
		fmt.Fprintf(w, "pending (not counted): %s\n", k)
	}
}

// ProcessSummary is what `roadmap faults run --process` prints.
type ProcessSummary struct {
	Histories  int                    `json:"histories"`
	KillPoints int                    `json:"kill_points"`
	Faults     int                    `json:"faults"`
	Recovered  int                    `json:"recovered"`
	ByKind     map[string]faults.Kind `json:"by_kind"`
	// WorkRepeated: passed groups whose agent step ran again; SpendLost:
	// tokens the model server answered that the record lacks (a flagged
	// estimate aside); Duplicates: pushes of a head the remote had, record
	// comments, PR comments, PRs, dispatches of one Job; Stuck: histories
	// that ended neither ready nor in the stop they expect.
	WorkRepeated int      `json:"work_repeated"`
	SpendLost    int64    `json:"spend_lost"`
	Duplicates   int      `json:"duplicates"`
	Stuck        int      `json:"stuck"`
	Violations   []string `json:"violations"`
	// Skipped are the pending kinds this run did not play, with why;
	// PendingFound what the pending kinds showed when played.
	Skipped      []string `json:"skipped"`
	PendingFound []string `json:"pending_found"`
	Seconds      float64  `json:"seconds"`
}

// pending are the process kinds whose histories show a defect another
// engineer is mending now: the CI sample skips them, saying why, and the
// sweep plays them with --pending (docs/reliability.md).
var pending = map[string]string{
	"proc_person_window": "a person's edit in the read→write window is lost (the write protocol's documented window)",
}

// pscenario is one history of the process suite.
type pscenario struct {
	Name, Kind string
	// Kill: the history is a kill point (counted apart from other faults).
	Kill bool
	// rules are put on the fake before the first Job; the world they get
	// lets a rule kill the running process.
	rules func(p *plife) []githubfake.Rule
	// model, when set, sees the number of each model call before it is
	// answered (1, 2, …).
	model func(p *plife, n int)
	// hook, when set, is installed on the bare remote as post-receive.
	postReceive bool
	// tornOutput cuts the first Job's $GITHUB_OUTPUT short.
	tornOutput bool
	// logGone: the killed Job's log is gone (404 from the fake).
	logGone bool
	// twoJobs: the first Job runs twice at once.
	twoJobs bool
	// end, when set, is the result the item must end with, of class class
	// (a person's act, a refused answer), instead of the crash-free run's;
	// mutate changes the model's answers; budget adds faults.ManyComments
	// people's comments and holds the item to faults.ItemRequestBudget
	// (issues.go).
	end    record.Result
	class  string
	mutate func(group int, c *llm.Conversation)
	budget bool
	// omitList puts listProxy between the processes and the fake.
	omitList bool
	// breaks is when a person breaks the record block around the Job's
	// first PATCH of it: "before" or "after" (issues.go).
	breaks string
	// diskFull runs the first Job on a small disk of its own and fills it
	// at group 2's first model call (disk.go).
	diskFull bool
}

// processScenarios are the sweep's histories, from the crash-free run's
// writes, reads and model calls.
func processScenarios(writes, reads []faults.Request, calls int, recordPatch string) []pscenario {
	var out []pscenario
	rule := func(r faults.Request, rl githubfake.Rule) githubfake.Rule {
		rl.Method, rl.Path, rl.Call = r.Method, r.Path, r.Call
		return rl
	}
	for _, r := range writes {
		r := r
		name := fmt.Sprintf("%s %s#%d", r.Method, r.Path, r.Call)
		out = append(out,
			pscenario{Name: "SIGKILL before " + name, Kind: "proc_kill_before_write", Kill: true, rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{Before: p.killNow, Drop: true})}
			}},
			pscenario{Name: "SIGKILL after " + name + " was applied, before its answer", Kind: "proc_kill_after_write", Kill: true, rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{ApplyThenFail: true, Drop: true, After: p.killNow})}
			}},
			pscenario{Name: "answer dropped after " + name + " was applied", Kind: "proc_write_answer_dropped", rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{ApplyThenFail: true, Drop: true})}
			}},
			// Temporal's "applied, then the answer timed out": the fake
			// holds the answer until the client gives up.
			pscenario{Name: "answer of " + name + " delayed past the client's timeout, applied", Kind: "proc_write_answer_late", rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{ApplyThenFail: true, Hang: true})}
			}},
		)
	}
	for _, r := range reads {
		r := r
		name := fmt.Sprintf("%s %s#%d", r.Method, r.Path, r.Call)
		out = append(out,
			pscenario{Name: "502 on " + name, Kind: "proc_read_5xx", rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{Status: 502})}
			}},
			pscenario{Name: "connection dropped on " + name, Kind: "proc_read_dropped", rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{Drop: true})}
			}},
			pscenario{Name: name + " answered only after the client's timeout", Kind: "proc_read_timeout", rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{rule(r, githubfake.Rule{Delay: stepGitHubTimeout + time.Second})}
			}},
		)
	}
	for n := 1; n <= calls; n++ {
		n := n
		out = append(out,
			pscenario{Name: fmt.Sprintf("SIGKILL during model call %d, before its answer", n), Kind: "proc_model_kill", Kill: true,
				model: func(p *plife, got int) {
					if got == n {
						p.killNow()
					}
				}},
			// The answer served, then the kill at once: the Job's spend
			// line for call n is not out yet (a race the suite runs, as a
			// runner lost just then would).
			pscenario{Name: fmt.Sprintf("SIGKILL just after model call %d was answered", n), Kind: "proc_model_kill_after_answer", Kill: true,
				model: func(p *plife, got int) {
					if got == n {
						before := p.w.Replay.Stats().Calls
						go func() {
							for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
								if p.w.Replay.Stats().Calls > before {
									p.killNow()
									return
								}
								runtime.Gosched()
							}
						}()
					}
				}},
		)
	}
	out = append(out,
		pscenario{Name: "SIGKILL while the first push completes on the remote", Kind: "proc_push_completed_after_kill", Kill: true, postReceive: true},
		pscenario{Name: "torn $GITHUB_OUTPUT of the first Job", Kind: "proc_torn_output", tornOutput: true},
		pscenario{Name: "the killed Job's log is gone", Kind: "proc_log_gone", Kill: true, logGone: true, model: func(p *plife, got int) {
			if got == 1 {
				p.killNow()
			}
		}},
		pscenario{Name: "two Jobs for the item at once", Kind: "proc_two_jobs", twoJobs: true},
		pscenario{Name: "SIGKILL during model call 1, then the continuation's dispatch fails (502)", Kind: "proc_dispatch_fails", Kill: true,
			model: func(p *plife, got int) {
				if got == 1 {
					p.killNow()
				}
			},
			rules: func(p *plife) []githubfake.Rule {
				return []githubfake.Rule{{Method: http.MethodPost, Path: "/repos/*/*/actions/workflows/*/dispatches", Call: 1, Status: 502}}
			}},
		pscenario{Name: "404 on the first read of the record comment", Kind: "proc_record_404", rules: func(p *plife) []githubfake.Rule {
			return []githubfake.Rule{{Method: http.MethodGet, Path: recordPatch, Call: 1, Status: 404}}
		}},
		pscenario{Name: "a person edits the record in the Job's read→write window", Kind: "proc_person_window", rules: func(p *plife) []githubfake.Rule {
			return []githubfake.Rule{{Method: http.MethodPatch, Path: recordPatch, Call: 1, Before: func() {
				p.keep = "person.note"
				p.w.Fake.EditComment(p.recordID(), func(cur string) string {
					return strings.Replace(cur, "<!-- roadmap:record v1\n", "<!-- roadmap:record v1\nperson.note: keep this line\n", 1)
				})
			}}}
		}},
	)
	return append(out, issueScenarios(recordPatch)...)
}

// plife is one process history being played.
type plife struct {
	o    ProcessOptions
	sc   pscenario
	w    *theworld.World
	dir  string
	cfg  string
	mu   sync.Mutex
	cur  *exec.Cmd // the process running now
	kill bool      // the suite SIGKILLed cur
	// fired counts the kills the suite made; calls the model calls seen.
	fired atomic.Int64
	calls atomic.Int64
	keep  string
	trace []string
	logs  []string
	// passed and started: implement.group at each Job's start, and the
	// groups whose agent step it began (from the model server's log).
	jobs    []pjobEnd
	ended   string // the item's end: ready, stopped, or stuck: why
	faulted atomic.Bool
	// reportFailed is the last log line of a report step that ended with
	// no outcome.
	reportFailed string
	// actCalls are the model calls made before a person's act;
	// maxModelRequest the largest request the model server got.
	actCalls        int
	maxModelRequest atomic.Int64
	// apiURL is where the processes find GitHub (the fake, or listProxy
	// before it); closeProxy stops the proxy.
	apiURL     string
	closeProxy func()
	// broke: the person's break of the record landed; outcomes are the
	// report steps' outcomes; exit the last process's exit code.
	broke     atomic.Bool
	outcomes  []report.Outcome
	exit      int
	reportBad string
	// disk is the small disk of a diskFull history; filled: the harness
	// filled it; unplayable says why the history could not be played.
	disk       *smallDisk
	filled     atomic.Bool
	unplayable string
}

type pjobEnd struct {
	attempt, passed int
	started         []int
	killed          bool
}

// killNow SIGKILLs the running process and waits until it is gone, so the
// fake's answer (or the next line of the hook) meets a dead client.
func (p *plife) killNow() {
	p.mu.Lock()
	cmd := p.cur
	if cmd != nil && cmd.Process != nil && !p.kill {
		p.kill = true
		p.fired.Add(1)
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	p.mu.Unlock()
	if cmd != nil {
		for i := 0; i < 200; i++ {
			if cmd.Process == nil || syscall.Kill(cmd.Process.Pid, 0) != nil || processGone(cmd.Process.Pid) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// processGone reports a zombie as gone: killed, not yet reaped.
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func (p *plife) pushLog() string { return filepath.Join(p.dir, "received") }

// duplicatePushes counts the refs the remote received a second time with a
// head it already had (the post-receive log: old new ref).
func (p *plife) duplicatePushes() int {
	data, _ := os.ReadFile(p.pushLog())
	seen, n := map[string]bool{}, 0
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		if seen[f[2]+" "+f[1]] {
			n++
		}
		seen[f[2]+" "+f[1]] = true
	}
	return n
}

func (p *plife) recordID() int64 {
	if c, ok := p.w.RecordComment(); ok {
		return c.ID
	}
	return 0
}

func (p *plife) note(format string, args ...any) {
	p.trace = append(p.trace, fmt.Sprintf(format, args...))
}

// RunProcess plays the process suite.
func RunProcess(ctx context.Context, o ProcessOptions) (*ProcessSummary, error) {
	start := time.Now()
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Binary == "" {
		return nil, fmt.Errorf("faults --process: no roadmap binary")
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "roadmap-faults-proc-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	s := &ProcessSummary{ByKind: map[string]faults.Kind{}, Violations: []string{}, Skipped: []string{}, PendingFound: []string{}}
	base, err := playProcess(ctx, o, filepath.Join(dir, "base"), pscenario{Name: "crash-free", Kind: "none"})
	if err != nil {
		return nil, fmt.Errorf("the crash-free process run: %w", err)
	}
	want := base.final()
	if vs := base.check(want); len(vs) > 0 || want.Result != string(record.ResultReady) {
		for _, v := range vs {
			s.Violations = append(s.Violations, "crash-free: "+v)
		}
		if want.Result != string(record.ResultReady) {
			s.Violations = append(s.Violations, "crash-free: ended "+want.Brief()+", want ready")
		}
		s.Seconds = time.Since(start).Seconds()
		return s, nil
	}
	log := base.w.Fake.Requests()
	writes, reads := faults.BaselineWrites(log), faults.BaselineReads(log)
	recordPatch := fmt.Sprintf("/repos/%s/%s/issues/comments/%d", faults.Owner, faults.Repo, base.recordID())
	all := processScenarios(writes, reads, int(base.calls.Load()), recordPatch)
	base.w.Close()
	for k, why := range pending {
		if !o.Pending {
			s.Skipped = append(s.Skipped, k+": "+why)
		}
	}
	slices.Sort(s.Skipped)
	var play []pscenario
	for _, sc := range all {
		if _, p := pending[sc.Kind]; p && !o.Pending {
			continue
		}
		if o.Only != "" && !strings.Contains(sc.Name, o.Only) && !strings.Contains(sc.Kind, o.Only) {
			continue
		}
		play = append(play, sc)
	}
	switch {
	case o.Cover:
		play = coverProcess(play, o.Key, o.Sample)
	case o.Sample > 0 && o.Sample < len(play):
		play = sample(play, o.Sample)
	}
	for i, sc := range play {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := playProcess(ctx, o, filepath.Join(dir, fmt.Sprintf("h%d", i)), sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Name, err)
		}
		got := p.final()
		vs := p.check(want)
		injected := p.injected()
		if !injected {
			vs = append(vs, "the fault was never injected")
		}
		s.Histories++
		k := s.ByKind[sc.Kind]
		if injected {
			k.Injected++
			if sc.Kill {
				s.KillPoints++
			} else {
				s.Faults++
			}
		}
		verdict := "ok"
		if why, ok := pending[sc.Kind]; ok {
			if len(vs) == 0 {
				vs = []string{"the pending mend seems to have landed (" + why + "): remove " + sc.Kind + " from the pending set"}
			} else {
				s.PendingFound = append(s.PendingFound, fmt.Sprintf("%s: %s (%s)", sc.Name, strings.Join(vs, "; "), why))
				vs = nil
				verdict = "PENDING"
			}
		} else {
			s.WorkRepeated += p.repeated()
			s.SpendLost += got.spendLost()
			s.Duplicates += p.duplicates(got)
			if p.ended != string(record.ResultReady) && sc.end == "" {
				s.Stuck++
			}
		}
		if len(vs) == 0 && injected && verdict == "ok" {
			k.Recovered++
			s.Recovered++
		}
		s.ByKind[sc.Kind] = k
		for _, v := range vs {
			s.Violations = append(s.Violations, sc.Name+": "+v)
			verdict = "VIOLATION"
		}
		fmt.Fprintf(o.Progress, "process %3d/%d %-9s %s  [%s]\n", i+1, len(play), verdict, sc.Name, strings.Join(p.trace, "; "))
		p.w.Close()
		if p.closeProxy != nil {
			p.closeProxy()
		}
		os.RemoveAll(p.dir)
	}
	s.Seconds = time.Since(start).Seconds()
	return s, nil
}

// sample takes n histories, the same every run: round robin over the
// kinds, each kind's histories taken evenly spread over its own, so every
// kind is played before any is played twice.
func sample(all []pscenario, n int) []pscenario {
	var order []string
	byKind := map[string][]pscenario{}
	for _, sc := range all {
		if _, ok := byKind[sc.Kind]; !ok {
			order = append(order, sc.Kind)
		}
		byKind[sc.Kind] = append(byKind[sc.Kind], sc)
	}
	var out []pscenario
	for round := 0; len(out) < n; round++ {
		took := false
		for _, k := range order {
			hs := byKind[k]
			if len(out) == n {
				break
			}
			if round >= len(hs) {
				continue
			}
			// The round-th of an even spread: 0, len/2, len/4, 3len/4, …
			out = append(out, hs[spread(round, len(hs))])
			took = true
		}
		if !took {
			break
		}
	}
	return out
}

// spread is the i-th index of a deterministic spread over n items that
// visits each once: the first, the middle, then the quarters, and so on
// (the bit-reversal order, folded onto n).
func spread(i, n int) int {
	seen := map[int]bool{}
	k := 0
	for bits := 1; ; bits <<= 1 {
		for j := 0; j < bits; j++ {
			rev := 0
			for b, x := bits>>1, j; b > 0; b >>= 1 {
				rev = rev<<1 | x&1
				x >>= 1
			}
			idx := rev * n / bits
			if idx < n && !seen[idx] {
				if k == i {
					return idx
				}
				seen[idx] = true
				k++
			}
		}
		if len(seen) == n {
			return i % n
		}
	}
}

// pstate is what a process history leaves, read from outside: the fake's
// state, the bare remote and the model server's log.
type pstate struct {
	faults.State
	RecordComments, PRComments int
	Dispatches                 map[string]int
	KeptKey                    bool
}

func (s pstate) spendLost() int64 {
	lost := (s.Served.TokensIn + s.Served.TokensOut) - (s.Spend.TokensIn + s.Spend.TokensOut)
	return max(lost, 0)
}

func (p *plife) final() pstate {
	w := p.w
	var s pstate
	s.Files = map[string]string{}
	s.Dispatches = map[string]int{}
	st := w.Replay.Stats()
	s.Served = record.Spend{TokensIn: st.TokensIn, TokensOut: st.TokensOut, ModelCalls: int(st.Calls)}
	if c, ok := w.RecordComment(); ok {
		if rec, err := record.Parse(c.Body); err == nil {
			res, _ := rec.Result()
			s.Result = string(res)
			s.Failure, _ = rec.Failure()
			s.Group, _ = rec.Group()
			s.Spend, _ = rec.Spend()
			s.KeptKey = p.keep != "" && rec.Has(record.Key(p.keep))
		}
	}
	branch := w.Branch()
	if head := w.RemoteHead(branch); head != "" {
		if out, err := theworld.Git(w.GitEnv(), w.Remote, "ls-tree", "-r", head); err == nil {
			for _, line := range strings.Split(out, "\n") {
				meta, path, ok := strings.Cut(line, "\t")
				if !ok {
					continue
				}
				f := strings.Fields(meta)
				s.Files[path] = f[len(f)-1]
				if strings.HasPrefix(path, "openspec/changes/archive/") {
					s.Archived = true
				}
			}
		}
		for _, st := range w.Fake.Statuses(head) {
			if st.Context == report.StatusContext {
				s.Status = st.State
			}
		}
	}
	for _, c := range w.Fake.Comments(w.Issue) {
		if c.Author == github.DefaultIdentity && record.HasBlock(c.Body) {
			s.RecordComments++
		}
	}
	for n := 1; ; n++ {
		is, ok := w.Fake.Issue(n)
		if !ok {
			break
		}
		if is.Pull != nil && strings.HasPrefix(is.Pull.Head, fmt.Sprintf("roadmap/%d-", w.Issue)) {
			s.PRs++
			s.PRDraft, s.PRState = is.Pull.Draft, is.State
			for _, c := range w.Fake.Comments(n) {
				if strings.Contains(c.Body, "<!-- roadmap:implement -->") {
					s.PRComments++
				}
			}
		}
	}
	for _, lb := range w.Fake.Labels(w.Issue) {
		if lb == report.DefaultLabels().Stopped {
			s.StopLabel = true
		}
	}
	for _, d := range w.Fake.Dispatches() {
		s.Dispatches[fmt.Sprint(d.Inputs["attempt"])]++
	}
	return s
}

// check holds a process history to the promises, from outside.
func (p *plife) check(want pstate) []string {
	if p.unplayable != "" {
		return []string{"not played: " + p.unplayable}
	}
	got := p.final()
	var vs []string
	bad := func(format string, args ...any) { vs = append(vs, fmt.Sprintf(format, args...)) }
	p.checkIssue(got, bad)
	if p.sc.end == "" && (got.Result != want.Result || got.Group != want.Group || got.PRs != want.PRs || got.PRDraft != want.PRDraft ||
		got.Archived != want.Archived || got.Status != want.Status || got.StopLabel != want.StopLabel) {
		bad("the final state (promise: as the crash-free run): got %s, want %s", got.Brief(), want.Brief())
	}
	if p.sc.end == "" && !maps.Equal(got.Files, want.Files) {
		bad("the branch's tree (promise: as the crash-free run) differs: got %v, want %v", got.Files, want.Files)
	}
	if n := p.repeated(); n > 0 {
		bad("passed faults.Groups repeated (promise: 0): %d", n)
	}
	if got.spendLost() > 0 || got.Spend.ModelCalls < got.Served.ModelCalls {
		bad("spend lost (promise: the record holds every call served): record %d in/%d out/%d calls, model server %d/%d/%d",
			got.Spend.TokensIn, got.Spend.TokensOut, got.Spend.ModelCalls, got.Served.TokensIn, got.Served.TokensOut, got.Served.ModelCalls)
	}
	if n := p.duplicates(got); n > 0 {
		bad("duplicate effects (promise: 0): %d (pushes of a known head %d, record comments %d, PR comments %d, PRs %d, dispatches %v)",
			n, p.duplicatePushes(), got.RecordComments, got.PRComments, got.PRs, got.Dispatches)
	}
	if p.ended != string(record.ResultReady) && p.sc.end == "" {
		bad("the item is stuck (promise: it ends ready): %s", p.ended)
	}
	// A 502 or a timeout on a read is retried by roadmap's transport, which
	// says so. A
	// dropped connection is not claimed: Go's own transport may resend an
	// idempotent request on a connection the server closed, and logs nothing.
	if (p.sc.Kind == "proc_read_5xx" || p.sc.Kind == "proc_read_timeout") && !p.logged(github.RecoveryPrefix+github.RecoverRetry+" ") {
		bad("recovery branch retry claimed without its event: no step logged a GitHub retry")
	}
	if c, ok := p.w.RecordComment(); ok {
		if rec, err := record.Parse(c.Body); err == nil {
			jobs, _ := rec.Jobs()
			lines := map[int]int{}
			for _, j := range jobs {
				lines[j.Job]++
			}
			for n, c := range lines {
				if c > 1 {
					bad("Job %d has %d lines in implement.jobs (promise: one Job per item at a time, numbers unique)", n, c)
				}
			}
		}
	}
	if p.keep != "" && !got.KeptKey {
		bad("the person's record line %s was lost (promise: others' keys survive)", p.keep)
	}
	return vs
}

// logged reports whether a step's log holds text.
func (p *plife) logged(text string) bool {
	for _, l := range p.logs {
		if strings.Contains(l, text) {
			return true
		}
	}
	return false
}

func (p *plife) repeated() int {
	n := 0
	for _, j := range p.jobs {
		for _, g := range j.started {
			if g <= j.passed {
				n++
			}
		}
	}
	return n
}

func (p *plife) duplicates(got pstate) int {
	n := p.duplicatePushes() + max(got.RecordComments-1, 0) + max(got.PRComments-1, 0) + max(got.PRs-1, 0)
	for _, c := range got.Dispatches {
		n += max(c-1, 0)
	}
	return n
}

// injected is the fault's evidence, from outside: the kill the suite made,
// the fake's logged answer, the torn file, the second Job.
func (p *plife) injected() bool {
	switch {
	case p.sc.breaks != "":
		return p.broke.Load()
	case p.sc.diskFull:
		return p.filled.Load()
	case p.sc.Kill && p.sc.rules != nil:
		return p.fired.Load() > 0 && p.faulted.Load()
	case p.sc.Kill:
		return p.fired.Load() > 0
	case p.sc.rules != nil:
		return p.faulted.Load()
	case p.sc.omitList:
		return p.faulted.Load()
	case p.sc.tornOutput, p.sc.twoJobs:
		return len(p.jobs) > 0
	}
	return true
}

// playProcess plays one history with real processes.
func playProcess(ctx context.Context, o ProcessOptions, dir string, sc pscenario) (*plife, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	convs, err := faults.Conversations(sc.mutate)
	if err != nil {
		return nil, err
	}
	p := &plife{o: o, sc: sc, dir: dir}
	wo := faults.SampleWorld(dir, convs)
	wo.ModelLatency = 100 * time.Millisecond
	wo.OnModelRequest = func(body []byte) {
		if n := int64(len(body)); n > p.maxModelRequest.Load() {
			p.maxModelRequest.Store(n)
		}
		n := int(p.calls.Add(1))
		if sc.model != nil {
			sc.model(p, n)
		}
	}
	tw, err := theworld.New(wo)
	if err != nil {
		return nil, err
	}
	p.w = tw
	if p.cfg, err = p.config(); err != nil {
		return p, err
	}
	p.apiURL = tw.GitHubURL()
	if sc.omitList {
		if p.apiURL, err = p.listProxy(); err != nil {
			return p, err
		}
	}
	if sc.budget {
		p.faulted.Store(true)
		for i := range faults.ManyComments {
			if _, err := tw.Fake.AddComment(tw.Issue, "bob", fmt.Sprintf("comment %d of the discussion", i+1)); err != nil {
				return p, err
			}
		}
	}
	if sc.rules != nil {
		for _, r := range sc.rules(p) {
			before := r.Before
			r.Before = func() {
				p.faulted.Store(true)
				if before != nil {
					before()
				}
			}
			tw.Fake.AddFault(r)
		}
	}
	if err := p.installPostReceive(sc.postReceive); err != nil {
		return p, err
	}
	if sc.diskFull {
		if err := canMountSmallDisk(filepath.Join(dir, "disk")); err != nil {
			p.unplayable, p.ended = err.Error(), "not played"
			return p, nil
		}
	}
	return p, p.play(ctx)
}

// config is the repository's configuration for the history's Jobs: the
// replay model server as the one tier, no isolation boundary (the model is
// recorded, not hostile), a short poll for the world's CI. The review and
// test strength, on by default, are off: the recorded conversations are the
// groups', and the quality checks have suites of their own.
func (p *plife) config() (string, error) {
	path := filepath.Join(p.dir, "roadmap.yml")
	cfg := fmt.Sprintf(`models:
  - provider: openai-compatible
    name: %s
    base_url: %s
prices:
  %s: {input: 1, output: 10}
isolation: none
implement:
  poll_interval: 1s
  watch_timeout: 60s
  repair_rounds: 2
  test_strength: false
review:
  enabled: false
`, theworld.ModelName, p.w.ModelURL(), theworld.ModelName)
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}

// installPostReceive makes the bare remote log every ref it receives (the
// duplicate pushes are counted from it) and, with signal, tell the suite
// when the first push has landed and hold its client a moment: the suite
// kills the Job while git's push completes on the server.
func (p *plife) installPostReceive(signal bool) error {
	sig := filepath.Join(p.dir, "pushed")
	hook := filepath.Join(p.w.Remote, "hooks", "post-receive")
	// Only branches: the item's lease (refs/roadmap/lease/N) is pushed by
	// every Job and is not the push the promises count or the kill aims at.
	script := "#!/bin/sh\ngrep ' refs/heads/' >> '" + p.pushLog() + "' || exit 0\n"
	if signal {
		script += "[ -e '" + sig + "' ] && exit 0\n: > '" + sig + "'\nsleep 2\n"
	}
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		return err
	}
	if !signal {
		return nil
	}
	go func() {
		for i := 0; i < 6000; i++ {
			if _, err := os.Stat(sig); err == nil {
				p.killNow()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return nil
}

// stepGitHubTimeout bounds each GitHub request of the suite's processes
// (ROADMAP_GITHUB_TIMEOUT): the histories that answer late wait it out, so
// it is short; the fake on loopback answers well inside it.
const stepGitHubTimeout = 4 * time.Second

// stepEnv is the environment a workflow step gives the binary.
func (p *plife) stepEnv(runID int64, attempt int, output string) []string {
	var env []string
	for _, kv := range p.w.GitEnv() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "ACTIONS_") || strings.HasPrefix(k, "RUNNER_") || strings.HasPrefix(k, "INPUT_") || k == "GH_TOKEN" {
			continue
		}
		env = append(env, kv)
	}
	tmp := filepath.Join(p.dir, fmt.Sprintf("runner-temp-%d-%d", runID, attempt))
	_ = os.MkdirAll(tmp, 0o755)
	return append(env, "GITHUB_API_URL="+p.apiURL, "GITHUB_TOKEN="+faults.Token, "ROADMAP_PUSH_TOKEN="+faults.PushToken, github.EnvTimeout+"="+stepGitHubTimeout.String(), "GITHUB_REPOSITORY="+faults.Owner+"/"+faults.Repo,
		fmt.Sprintf("GITHUB_RUN_ID=%d", runID), fmt.Sprintf("GITHUB_RUN_ATTEMPT=%d", attempt), "GITHUB_OUTPUT="+output,
		"GITHUB_STEP_SUMMARY="+filepath.Join(tmp, "summary.md"), "GITHUB_REF_NAME=main", "RUNNER_TEMP="+tmp)
}

// run starts the binary with args and env, and waits for it; the suite
// may SIGKILL it meanwhile (killed reports that).
func (p *plife) run(ctx context.Context, args, env []string) (stdout, log string, killed bool, err error) {
	return p.runProgram(ctx, p.o.Binary, args, env)
}

// runProgram is run with another program before the binary (the small
// disk's wrapper).
func (p *plife) runProgram(ctx context.Context, program string, args, env []string) (stdout, log string, killed bool, err error) {
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return "", "", false, err
	}
	p.mu.Lock()
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return "", "", false, err
	}
	p.cur, p.kill = cmd, false
	p.mu.Unlock()
	var b strings.Builder
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	werr := cmd.Wait()
	p.mu.Lock()
	killed = p.kill
	p.cur = nil
	p.exit = cmd.ProcessState.ExitCode()
	p.mu.Unlock()
	p.logs = append(p.logs, b.String())
	if werr != nil && !killed {
		if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() < 0 {
			return out.String(), b.String(), false, werr
		}
	}
	return out.String(), b.String(), killed, nil
}

// play runs the item's Jobs and a report after each, as roadmap.yml does,
// following report's dispatches, until the item settles.
func (p *plife) play(ctx context.Context) error {
	w := p.w
	stopCI := make(chan struct{})
	defer close(stopCI)
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopCI:
				return
			case <-t.C:
			}
			w.PassCI(w.Branch(), "tests passed")
		}
	}()
	runID := w.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "issues", Status: "in_progress"})
	attempt, rc := 1, int64(0)
	for n := 0; n < faults.MaxJobs; n++ {
		je := pjobEnd{attempt: attempt}
		if c, ok := w.RecordComment(); ok {
			if rec, err := record.Parse(c.Body); err == nil {
				je.passed, _ = rec.Group()
			}
		}
		served := len(w.Replay.Stats().Served)
		var other chan twin
		if p.sc.twoJobs && n == 0 {
			// The same Job started twice, by two runs (no concurrency
			// group joins them): both run, and each run's report runs.
			other = make(chan twin, 1)
			id := w.Fake.AddRun(githubfake.Run{WorkflowFile: "roadmap.yml", HeadBranch: "main", Event: "workflow_dispatch", Status: "in_progress"})
			go func() {
				tw := twin{runID: id}
				tw.outputs, tw.log, tw.killed, tw.err = p.implement(ctx, attempt, id, rc, fmt.Sprintf("%d-%d-twin", attempt, n))
				other <- tw
			}()
		}
		outputs, log, killed, err := p.implement(ctx, attempt, runID, rc, fmt.Sprintf("%d-%d", attempt, n))
		var tw twin
		if other != nil {
			tw = <-other
			err = errors.Join(err, tw.err)
		}
		if err != nil {
			return err
		}
		for _, s := range w.Replay.Stats().Served[served:] {
			var g int
			if _, err := fmt.Sscanf(s.Conversation, "group-%d", &g); err == nil && s.Turn == 0 {
				je.started = append(je.started, g)
			}
		}
		je.killed = killed
		p.jobs = append(p.jobs, je)
		if id, err := strconv.ParseInt(outputs["record_comment"], 10, 64); err == nil && id != 0 {
			rc = id
		}
		if killed {
			p.note("job %d SIGKILLed", attempt)
		} else {
			p.note("job %d %s %s group %s", attempt, outputs["result"], outputs["failure"], outputs["group"])
		}
		out, err := p.report(ctx, runID, rc, outputs, log, killed)
		if err != nil {
			return err
		}
		if other != nil {
			p.note("twin run %d: %s %s", tw.runID, tw.outputs["result"], tw.outputs["failure"])
			tout, err := p.report(ctx, tw.runID, rc, tw.outputs, tw.log, tw.killed)
			if err != nil {
				return err
			}
			if out.Action == report.ActionNone && tout.Action != report.ActionNone {
				// The followed Job left the item to its twin: the item goes
				// on as the twin's report says.
				out, outputs = tout, tw.outputs
			}
		}
		if p.reportFailed != "" {
			p.ended = "the report step failed and nothing continues the item: " + p.reportFailed
			return nil
		}
		if out.DispatchedRunID != 0 && out.NextAttempt != 0 {
			attempt, runID = out.NextAttempt, out.DispatchedRunID
			continue
		}
		// The item's end as report found it: a Job killed after its last
		// mark left no outputs, and report reads its result from the record.
		p.ended = out.Result
		if p.ended == "" {
			p.ended = outputs["result"]
		}
		if out.Stopped {
			p.ended = "stopped: " + string(out.Class) + ": " + out.Reason
		} else if p.ended == "" {
			p.ended = fmt.Sprintf("report %s on a Job with no result, and dispatched nothing", out.Action)
		}
		return nil
	}
	p.ended = fmt.Sprintf("%d Jobs and not settled", faults.MaxJobs)
	return nil
}

// implement runs one implement Job's step, in its own workspace named by
// tag, and returns its step outputs as the runner reads them from
// $GITHUB_OUTPUT.
func (p *plife) implement(ctx context.Context, attempt int, runID, rc int64, tag string) (map[string]string, string, bool, error) {
	ws, err := p.w.Workspace("job-" + tag)
	if err != nil {
		return nil, "", false, err
	}
	output := filepath.Join(p.dir, "output-"+tag)
	args := []string{"implement", "--issue", strconv.Itoa(p.w.Issue), "--attempt", strconv.Itoa(attempt), "--config", p.cfg,
		"--workdir", ws, "--run-id", strconv.FormatInt(runID, 10), "--record-comment", strconv.FormatInt(rc, 10),
		"--trace-file", filepath.Join(p.dir, "trace-"+tag+".jsonl"), "--json"}
	var log string
	var killed bool
	if p.sc.diskFull && strings.HasSuffix(tag, "-0") {
		// The faulted Job alone runs on the small disk; its continuation
		// gets a fresh runner.
		if p.disk, err = newSmallDisk(filepath.Join(p.dir, "disk"), ws); err == nil {
			program, wrapped := p.disk.wrap(p.o.Binary, args)
			_, log, killed, err = p.runProgram(ctx, program, wrapped, p.stepEnv(runID, 1, output))
		}
	} else {
		_, log, killed, err = p.run(ctx, args, p.stepEnv(runID, 1, output))
	}
	if err != nil {
		return nil, log, killed, fmt.Errorf("job %d: %w\n%s", attempt, err, log)
	}
	data, _ := os.ReadFile(output)
	if p.sc.tornOutput && strings.HasSuffix(tag, "-0") && len(data) > 0 {
		data = data[:len(data)*2/3]
	}
	return parseOutputs(string(data)), log, killed, nil
}

// twin is the second of two Jobs started for one item at once: another run
// (a person's dispatch while the label's run goes), whose implement and
// report run as that run's would.
type twin struct {
	runID   int64
	outputs map[string]string
	log     string
	killed  bool
	err     error
}

// report posts the Job to the fake (its log, as the job-log endpoint will
// serve it; a killed Job's ends in exit code 137) and runs report's step
// with the outputs the runner read; a killed report run is re-run as the
// workflow run's next attempt.
func (p *plife) report(ctx context.Context, runID, rc int64, outputs map[string]string, log string, killed bool) (report.Outcome, error) {
	job := githubfake.Job{Name: "implement", Conclusion: "success",
		Steps: []githubfake.Step{{Name: "Run roadmap implement", Status: "completed", Conclusion: "success"}}}
	if killed || outputs["result"] == "" {
		job.Conclusion, job.Steps[0].Conclusion = "failure", "failure"
	}
	if killed {
		log += "##[error]Process completed with exit code 137.\n"
	}
	job.Log = faults.Stamp(log)
	id, err := p.w.Fake.AddJob(runID, job)
	if err != nil {
		return report.Outcome{}, err
	}
	if p.sc.logGone {
		p.w.Fake.AddFault(githubfake.Rule{Method: http.MethodGet, Path: fmt.Sprintf("/repos/%s/%s/actions/jobs/%d/logs", faults.Owner, faults.Repo, id), Status: 404})
	}
	args := []string{"report", "--issue", strconv.Itoa(p.w.Issue), "--job-result", job.Conclusion,
		"--result", outputs["result"], "--failure", outputs["failure"], "--group", or0(outputs["group"]), "--spend", outputs["spend"],
		"--head-sha", outputs["head_sha"], "--pr", or0(outputs["pr"]), "--attempt", or0(outputs["attempt"]), "--reason", outputs["reason"],
		"--run-id", strconv.FormatInt(runID, 10), "--record-comment", strconv.FormatInt(rc, 10),
		"--workflow", "roadmap.yml", "--ref", "main", "--config", p.cfg, "--json"}
	for try := 1; try <= 3; try++ {
		stdout, rlog, rkilled, err := p.run(ctx, args, p.stepEnv(runID, try, filepath.Join(p.dir, fmt.Sprintf("report-output-%d-%d", runID, try))))
		if err != nil {
			return report.Outcome{}, fmt.Errorf("report: %w\n%s", err, rlog)
		}
		if rkilled {
			p.note("report killed")
			continue
		}
		var out report.Outcome
		if p.exit != 0 {
			p.note("report exited %d", p.exit)
			p.reportBad = fmt.Sprintf("exit %d: %s", p.exit, lastLine(rlog))
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			// The step failed with no outcome: in a workflow nothing runs
			// after it until a person re-runs the job.
			p.reportFailed = lastLine(rlog)
			p.note("report step failed")
			return out, nil
		}
		p.note("report: %s %s → %s", out.Result, out.Class, out.Action)
		p.outcomes = append(p.outcomes, out)
		return out, nil
	}
	return report.Outcome{}, fmt.Errorf("report was killed three times")
}

func lastLine(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	return lines[len(lines)-1]
}

func or0(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// parseOutputs reads a $GITHUB_OUTPUT file as the runner does: name=value
// lines and name<<DELIMITER blocks; an entry cut short is dropped.
func parseOutputs(text string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if name, delim, ok := strings.Cut(l, "<<"); ok && !strings.Contains(name, "=") {
			var val []string
			closed := false
			for i++; i < len(lines); i++ {
				if lines[i] == delim {
					closed = true
					break
				}
				val = append(val, lines[i])
			}
			if closed {
				out[name] = strings.Join(val, "\n")
			}
			continue
		}
		if name, val, ok := strings.Cut(l, "="); ok && i < len(lines)-1 {
			out[name] = val
		}
	}
	return out
}

// coverProcess picks from all (in their order) one history of each kind,
// chosen by key, then extra more chosen by key among the rest.
func coverProcess(all []pscenario, key string, extra int) []pscenario {
	byKind := map[string][]int{}
	var order []string
	for i, sc := range all {
		if _, ok := byKind[sc.Kind]; !ok {
			order = append(order, sc.Kind)
		}
		byKind[sc.Kind] = append(byKind[sc.Kind], i)
	}
	picked := make([]bool, len(all))
	for _, k := range order {
		hs := byKind[k]
		picked[hs[faults.Keyed(key, "kind "+k, len(hs))]] = true
	}
	var rest []int
	for i := range all {
		if !picked[i] {
			rest = append(rest, i)
		}
	}
	slices.SortStableFunc(rest, func(a, b int) int {
		return faults.Keyed(key, "extra "+all[a].Name, 1<<30) - faults.Keyed(key, "extra "+all[b].Name, 1<<30)
	})
	for _, i := range rest[:min(extra, len(rest))] {
		picked[i] = true
	}
	var out []pscenario
	for i, sc := range all {
		if picked[i] {
			out = append(out, sc)
		}
	}
	return out
}
