package tracker

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// MaxDepth is how many levels below the tracker the check walks: GitHub
// nests sub-issues at most 8 levels deep.
const MaxDepth = 8

// The states of a child.
const (
	Done         = "done"         // closed as completed (or closed before GitHub kept reasons)
	Dropped      = "dropped"      // closed as not planned, or as a duplicate
	Open         = "open"         // not closed
	Unverifiable = "unverifiable" // deleted, or the token cannot see it
)

// GitHub is what the check reads (internal/github's *Client).
type GitHub interface {
	FullName() string
	IssueState(ctx context.Context, n int) (github.IssueState, error)
	SubIssues(ctx context.Context, n int) ([]github.IssueState, error)
	IssueStates(ctx context.Context, refs []github.IssueRef) (map[github.IssueRef]github.IssueState, error)
	Requests() github.Accounting
}

// Child is one issue the tracker's work is made of.
type Child struct {
	Number int    `json:"number"`
	Repo   string `json:"repo"`
	Title  string `json:"title"`
	State  string `json:"state"`
	// Path is the chain of trackers from the checked issue down to the
	// child, both included: ["#1", "#5", "#9"].
	Path []string `json:"path"`
	// Via says where the child was found: sub_issue, task_list, or both.
	Via []string `json:"via"`
	// Checked is the task-list box as ticked (nil: not in a task list). A
	// box is not evidence; it is reported when it disagrees with State.
	Checked *bool `json:"checked,omitempty"`
	// Body is the child's body as read (its blockers are read from it),
	// and Tracker what makes the child a tracker itself (Kind), "" for
	// a leaf: what a drive of the tracker needs, not printed.
	Body    string `json:"-"`
	Tracker string `json:"-"`
}

// Result is the check of one tracker. Field names are stable: scripts read
// `roadmap tracker status --json`.
type Result struct {
	Issue        int     `json:"issue"`
	Repo         string  `json:"repo"`
	Title        string  `json:"title"`
	Complete     bool    `json:"complete"`
	Children     []Child `json:"children"`
	Open         int     `json:"open"`
	Dropped      int     `json:"dropped"`
	Done         int     `json:"done"`
	Unverifiable int     `json:"unverifiable"`
	// Requests is how many requests to GitHub the check made.
	Requests int `json:"requests"`
	// Notes are what the check did not follow: cycles, trackers deeper
	// than 8 levels, nested trackers in other repositories.
	Notes []string `json:"notes,omitempty"`
}

type key struct {
	repo string // lower case
	n    int
}

type walker struct {
	gh   GitHub
	home string
	seen map[key]bool
	res  *Result
}

// Check reads tracker issue n and every child it has, nested trackers
// included, and says whether it is complete. A tracker GitHub does not
// have is an error wrapping github.ErrNotFound.
func Check(ctx context.Context, gh GitHub, n int) (Result, error) {
	before := gh.Requests()
	root, err := gh.IssueState(ctx, n)
	if err != nil {
		return Result{}, fmt.Errorf("read tracker #%d: %w", n, err)
	}
	w := &walker{gh: gh, home: gh.FullName(), seen: map[key]bool{}}
	w.res = &Result{Issue: n, Repo: w.home, Title: root.Title, Children: []Child{}}
	root.Repo = w.home
	w.seen[w.key(w.home, n)] = true
	err = w.walk(ctx, root, []string{"#" + fmt.Sprint(n)}, map[key]bool{w.key(w.home, n): true}, 0)
	w.res.Requests = gh.Requests().Sub(before).Total()
	if err != nil {
		return *w.res, err
	}
	for _, c := range w.res.Children {
		switch c.State {
		case Open:
			w.res.Open++
		case Dropped:
			w.res.Dropped++
		case Done:
			w.res.Done++
		default:
			w.res.Unverifiable++
		}
	}
	w.res.Complete = len(w.res.Children) > 0 && w.res.Open == 0
	return *w.res, nil
}

func (w *walker) key(repo string, n int) key { return key{strings.ToLower(repo), n} }

// name is how a path and the output write an issue: #12 at home,
// owner/repo#12 elsewhere.
func (w *walker) name(repo string, n int) string {
	if strings.EqualFold(repo, w.home) {
		return fmt.Sprintf("#%d", n)
	}
	return fmt.Sprintf("%s#%d", repo, n)
}

// walk lists the children of node (a tracker at depth levels below the
// checked issue) and walks those that are trackers in turn.
func (w *walker) walk(ctx context.Context, node github.IssueState, path []string, onPath map[key]bool, depth int) error {
	type found struct {
		st      github.IssueState
		via     []string
		checked *bool
	}
	var kids []*found
	index := map[key]*found{}
	if node.SubIssues > 0 {
		subs, err := w.gh.SubIssues(ctx, node.Number)
		if err != nil {
			return err
		}
		for _, s := range subs {
			k := w.key(s.Repo, s.Number)
			if index[k] == nil {
				f := &found{st: s, via: []string{"sub_issue"}}
				index[k] = f
				kids = append(kids, f)
			}
		}
	}
	var ask []github.IssueRef
	var fromList []*found
	for _, r := range ParseTaskList(node.Body) {
		repo := r.Repo
		if repo == "" || strings.EqualFold(repo, w.home) {
			repo = w.home
		}
		k := w.key(repo, r.Number)
		checked := r.Checked
		if f := index[k]; f != nil {
			if len(f.via) == 1 && f.via[0] == "sub_issue" {
				f.via = append(f.via, "task_list")
				f.checked = &checked
			}
			continue
		}
		f := &found{st: github.IssueState{Repo: repo, Number: r.Number}, via: []string{"task_list"}, checked: &checked}
		index[k] = f
		kids = append(kids, f)
		if !onPath[k] && !w.seen[k] {
			ask = append(ask, github.IssueRef{Repo: repo, Number: r.Number})
			fromList = append(fromList, f)
		}
	}
	if len(ask) > 0 {
		states, err := w.gh.IssueStates(ctx, ask)
		if err != nil {
			return err
		}
		for i, f := range fromList {
			f.st = states[ask[i]]
		}
	}
	for _, f := range kids {
		k := w.key(f.st.Repo, f.st.Number)
		here := w.name(f.st.Repo, f.st.Number)
		if onPath[k] {
			w.res.Notes = append(w.res.Notes, fmt.Sprintf("cycle: %s → %s is not followed", strings.Join(path, " → "), here))
			continue
		}
		if w.seen[k] {
			continue // listed already, under another tracker
		}
		w.seen[k] = true
		childPath := append(append([]string(nil), path...), here)
		w.res.Children = append(w.res.Children, Child{Number: f.st.Number, Repo: f.st.Repo, Title: text.Safe(f.st.Title, 200),
			State: classify(f.st), Path: childPath, Via: f.via, Checked: f.checked, Body: f.st.Body, Tracker: Kind(f.st.SubIssues, f.st.Body)})
		if f.st.Missing || (f.st.SubIssues == 0 && len(ParseTaskList(f.st.Body)) == 0) {
			continue
		}
		switch {
		case !strings.EqualFold(f.st.Repo, w.home):
			w.res.Notes = append(w.res.Notes, fmt.Sprintf("%s is a tracker in another repository: its children are not read", here))
		case depth+1 >= MaxDepth:
			w.res.Notes = append(w.res.Notes, fmt.Sprintf("%s is %d levels deep: its children are not read (GitHub nests at most %d)", here, depth+1, MaxDepth))
		default:
			onPath[k] = true
			err := w.walk(ctx, f.st, childPath, onPath, depth+1)
			delete(onPath, k)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func classify(s github.IssueState) string {
	switch {
	case s.Missing:
		return Unverifiable
	case s.State == "open":
		return Open
	case s.State != "closed":
		return Unverifiable
	case s.StateReason == "not_planned" || s.StateReason == "duplicate":
		return Dropped
	}
	return Done
}

// Print writes the result for a person: one line per child, then the
// verdict.
func Print(w io.Writer, r Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "tracker #%d: %s\n", r.Issue, text.Safe(r.Title, 200))
	for _, c := range r.Children {
		ref := fmt.Sprintf("#%d", c.Number)
		if !strings.EqualFold(c.Repo, r.Repo) {
			ref = fmt.Sprintf("%s#%d", c.Repo, c.Number)
		}
		line := fmt.Sprintf("%-12s  %-8s  %s", c.State, ref, c.Title)
		if len(c.Path) > 2 {
			line += "  (via " + strings.Join(c.Path[:len(c.Path)-1], " → ") + ")"
		}
		if c.Checked != nil && *c.Checked != (c.State == Done || c.State == Dropped) {
			if *c.Checked {
				line += "  [box ticked, issue not closed]"
			} else {
				line += "  [closed, box not ticked]"
			}
		}
		b.WriteString(line + "\n")
	}
	for _, n := range r.Notes {
		b.WriteString("note: " + n + "\n")
	}
	counts := fmt.Sprintf("%d open, %d done, %d dropped, %d unverifiable; %d requests", r.Open, r.Done, r.Dropped, r.Unverifiable, r.Requests)
	switch {
	case r.Complete:
		fmt.Fprintf(&b, "complete: no child is open (%s)\n", counts)
	case len(r.Children) == 0:
		fmt.Fprintf(&b, "not complete: #%d has no sub-issues and no task-list references (%s)\n", r.Issue, counts)
	default:
		var open []string
		for _, c := range r.Children {
			if c.State == Open {
				open = append(open, strings.Join(c.Path[1:], " → "))
			}
		}
		fmt.Fprintf(&b, "not complete: open %s (%s)\n", strings.Join(open, ", "), counts)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Kind says whether an issue is a tracker, from what a read of it shows: its
// native sub-issues (subIssues, the issue's sub_issues_summary.total) and the
// issue references of its body's task list. It is "" for an issue that is
// not one, and otherwise says what makes it one: "3 sub-issues", "a task
// list of 2 issues".
func Kind(subIssues int, body string) string {
	if subIssues > 0 {
		return plural(subIssues, "sub-issue")
	}
	if refs := ParseTaskList(body); len(refs) > 0 {
		return "a task list of " + plural(len(refs), "issue")
	}
	return ""
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
