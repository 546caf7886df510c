package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/roadmap-dev/roadmap/internal/checks"
	"github.com/roadmap-dev/roadmap/internal/kernel"
	"github.com/roadmap-dev/roadmap/internal/llm"
)

// ItemRequestBudget is the counted GitHub requests an item's whole life may
// cost, whatever its plan's size and its issue's history (issue 46,
// docs/record.md "What a Job costs").
const ItemRequestBudget = 30

// ManyComments is the people's comments on the many_comments issue.
const ManyComments = 1000

// limitScenarios are issue 46's faults on what roadmap does not control:
// GitHub's eventually consistent lists, a long discussion, a full disk, a
// model answer past its bound.
func limitScenarios(g int) []scenario {
	return []scenario{
		// The item's first Job is handed no record id and finds no pointer
		// (the world's record predates it): the list is its only way, and
		// the first list leaves the record out.
		{Name: "the first comment list leaves out the record (a Job handed no record id, no pointer)", Kind: "list_omits_record", Expect: expectReady,
			setup: func(l *life) error { l.omitLists.Store(1); return nil }},
		// A continuation handed no record id (a workflow that lost the
		// output) after a person deleted the record pointer, as an older
		// release would leave it: its first list leaves the record out.
		{Name: "kill before push#2; the record pointer deleted; the continuation, handed no record id, gets a list without the record",
			Kind: "list_omits_record", Expect: expectReady, arms: []string{"before " + EffPush + "#2"},
			setup: func(l *life) error {
				l.fresh = true
				l.beforeJob = func(l *life, attempt int) error {
					if attempt < 2 || l.omitted.Load() > 0 {
						return nil
					}
					l.omitLists.Store(1)
					return l.dropPointer()
				}
				return nil
			}},
		{Name: fmt.Sprintf("an issue with %d comments by people", ManyComments), Kind: "many_comments", Expect: expectReady,
			setup: func(l *life) error {
				l.budget = true
				for i := range ManyComments {
					if _, err := l.w.fake.AddComment(l.w.issue, "bob", fmt.Sprintf("comment %d of the discussion", i+1)); err != nil {
						return err
					}
				}
				return nil
			}},
		{Name: fmt.Sprintf("the disk fills at group %d's checks (No space left on device)", g), Kind: "disk_full", Branch: "continue_disk_full", Expect: expectReady,
			setup: func(l *life) error {
				l.checks = func(r checks.Runner) checks.Runner { return &fullDisk{Runner: r, l: l, at: g} }
				return nil
			}},
		{Name: fmt.Sprintf("the model answers group %d with a body over llm.MaxAnswerBytes", g), Kind: "answer_over_limit", Expect: expectStop, Class: "unknown",
			setup: func(l *life) error { l.overGroup = g; return nil },
			mutate: func(group int, c *llm.Conversation) {
				if group == g {
					c.Turns[0].Response.Content = strings.Repeat("all work and no play ", llm.MaxAnswerBytes/20+1)
				}
			}},
	}
}

// fullDisk is the check runner of a machine whose disk filled up: its
// at-th group's first check cannot write its output (ENOSPC, as the
// sandbox sees it). The next Job runs on a fresh runner, with room.
type fullDisk struct {
	checks.Runner
	l  *life
	at int
}

func (f *fullDisk) Run(ctx context.Context, dir string, argv []string) (checks.Result, error) {
	if strings.Contains(strings.Join(argv, " "), fmt.Sprintf("greeting-%d.txt", f.at)) && !f.l.diskFilled {
		f.l.diskFilled = true
		return checks.Result{}, fmt.Errorf("run %s: %w", argv[0], &os.PathError{Op: "write", Path: "/tmp/roadmap-checks/out", Err: syscall.ENOSPC})
	}
	return f.Runner.Run(ctx, dir, argv)
}

// reIssueCommentList is the list of one issue's comments.
var reIssueCommentList = regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/(\d+)/comments$`)

// answered is the transport's look at an answer: a list of the item's
// comments that must leave the record out (list_omits_record) loses it.
func (l *life) answered(req *http.Request, resp *http.Response) {
	m := reIssueCommentList.FindStringSubmatch(req.URL.Path)
	if l.omitLists.Load() == 0 || req.Method != http.MethodGet || m == nil || m[1] != fmt.Sprint(l.w.issue) || resp.StatusCode != http.StatusOK {
		return
	}
	l.omitLists.Add(-1)
	l.omitted.Add(int64(OmitRecord(resp)))
}

// OmitRecord takes the record comment out of resp, an answer listing an
// issue's comments, as a stale list of GitHub's would leave it, and says
// how many comments it took out. The answer loses its ETag: a stale list
// has its own, so the next conditional list is not answered from this one.
func OmitRecord(resp *http.Response) int {
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var list []map[string]any
	if err != nil || json.Unmarshal(data, &list) != nil {
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return 0
	}
	kept := list[:0]
	for _, c := range list {
		if body, _ := c["body"].(string); !strings.Contains(body, "roadmap:record") {
			kept = append(kept, c)
		}
	}
	data, _ = json.Marshal(kept)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	resp.Header.Del("ETag")
	resp.Header.Del("Last-Modified")
	return len(list) - len(kept)
}

// dropPointer deletes the item's record pointer from the remote, as a
// person cleaning refs (or an older release that made none) leaves it.
func (l *life) dropPointer() error {
	_, err := gitIn(l.w.remote, "update-ref", "-d", kernel.RecordPointerRef(l.w.issue))
	return err
}
