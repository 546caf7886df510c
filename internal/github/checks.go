package github

import (
	"context"
	"fmt"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
)

// CheckSummary is what a ref's checks say, commit statuses and check runs
// together.
type CheckSummary struct {
	Ref string
	SHA string
	// State is failure when any check failed, else pending when any is still
	// running or none has reported yet (Total is 0), else success.
	State                             string
	Total, Pending, Succeeded, Failed int
	Checks                            []Check
}

// Check is one commit status or check run.
type Check struct {
	Name  string
	Kind  string // "status" or "check_run"
	State string // pending, success or failure
	// Detail is GitHub's own word: a status's state, or a check run's status
	// and conclusion ("completed/timed_out").
	Detail      string
	Description string
	URL         string
	// ID is a check run's id (0 for a status). A GitHub Actions job's
	// check run has the job's id: its log is the job's log.
	ID int64
	// App is the slug of the app that made a check run ("github-actions"
	// for a job of a workflow run).
	App string
	// Output is a check run's output (title, summary, text), as its app
	// wrote it, cut to MaxCheckOutput bytes. Untrusted text.
	Output string
}

// MaxCheckOutput bounds the output kept from one check run.
const MaxCheckOutput = 16 << 10

// ActionsApp is the slug of GitHub Actions, which makes the check runs of
// workflow jobs.
const ActionsApp = "github-actions"

// CreateStatus sets a commit status on sha. state is pending, success,
// failure or error; description is masked and cut to GitHub's 140
// characters. Setting a status again is harmless (the latest per context
// wins), so a write whose answer was lost is sent again.
//
// GitHub API docs: https://docs.github.com/rest/commits/statuses#create-a-commit-status
func (c *Client) CreateStatus(ctx context.Context, sha, context, state, description, targetURL string) error {
	switch state {
	case "pending", "success", "failure", "error":
	default:
		return fmt.Errorf("create status %s on %s: state %q is not pending, success, failure or error", context, sha, state)
	}
	description = c.mask(description)
	if r := []rune(description); len(r) > 140 {
		description = string(r[:139]) + "…"
	}
	st := &gogithub.RepoStatus{State: &state, Context: &context, Description: &description}
	if targetURL != "" {
		st.TargetURL = &targetURL
	}
	err := c.again(ctx, func() error {
		_, _, err := c.gh.Repositories.CreateStatus(c.ctx(ctx), c.owner, c.repo, sha, st)
		return c.fail(err)
	})
	if err != nil {
		return fmt.Errorf("create status %s on %s: %w", context, sha, err)
	}
	return nil
}

// Checks reads a ref's combined commit status and its check runs (all
// pages). Both reads are conditional: polling a ref whose checks have not
// changed costs two free 304s.
//
// GitHub API docs: https://docs.github.com/rest/commits/statuses#get-the-combined-status-for-a-specific-reference
// and https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference
func (c *Client) Checks(ctx context.Context, ref string) (CheckSummary, error) {
	sum := CheckSummary{Ref: ref}
	opts := &gogithub.ListOptions{PerPage: 100}
	for {
		cs, resp, err := c.gh.Repositories.GetCombinedStatus(c.ctx(ctx), c.owner, c.repo, ref, opts)
		if err != nil {
			return CheckSummary{}, fmt.Errorf("read checks of %s: combined status: %w", ref, c.fail(err))
		}
		sum.SHA = cs.GetSHA()
		for _, s := range cs.Statuses {
			state := "pending"
			switch s.GetState() {
			case "success":
				state = "success"
			case "failure", "error":
				state = "failure"
			}
			sum.add(Check{Name: s.GetContext(), Kind: "status", State: state, Detail: s.GetState(),
				Description: s.GetDescription(), URL: s.GetTargetURL()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	runOpts := &gogithub.ListCheckRunsOptions{ListOptions: gogithub.ListOptions{PerPage: 100}}
	for {
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(c.ctx(ctx), c.owner, c.repo, ref, runOpts)
		if err != nil {
			return CheckSummary{}, fmt.Errorf("read checks of %s: check runs: %w", ref, c.fail(err))
		}
		for _, r := range res.CheckRuns {
			state, detail := "pending", r.GetStatus()
			if r.GetStatus() == "completed" {
				detail += "/" + r.GetConclusion()
				switch r.GetConclusion() {
				case "success", "neutral", "skipped":
					state = "success"
				default: // failure, cancelled, timed_out, action_required, stale, startup_failure
					state = "failure"
				}
			}
			if sum.SHA == "" {
				sum.SHA = r.GetHeadSHA()
			}
			out := r.GetOutput()
			text := strings.TrimSpace(strings.Join([]string{out.GetTitle(), out.GetSummary(), out.GetText()}, "\n"))
			if len(text) > MaxCheckOutput {
				text = strings.ToValidUTF8(text[:MaxCheckOutput], "")
			}
			sum.add(Check{Name: r.GetName(), Kind: "check_run", State: state, Detail: detail,
				Description: out.GetTitle(), URL: r.GetHTMLURL(), ID: r.GetID(), App: r.GetApp().GetSlug(), Output: text})
		}
		if resp.NextPage == 0 {
			break
		}
		runOpts.Page = resp.NextPage
	}
	sum.settle()
	return sum, nil
}

// settle sets State from the counts.
func (s *CheckSummary) settle() {
	switch {
	case s.Failed > 0:
		s.State = "failure"
	case s.Pending > 0 || s.Total == 0:
		s.State = "pending"
	default:
		s.State = "success"
	}
}

// Without returns the summary without the checks whose name starts with
// prefix (roadmap's own statuses, "roadmap/", are not the PR's checks: an
// item restarted at the same head must not read its own old failure as a
// failing check). Ignored counts what was left out.
func (s CheckSummary) Without(prefix string) (out CheckSummary, ignored int) {
	out = CheckSummary{Ref: s.Ref, SHA: s.SHA}
	for _, ch := range s.Checks {
		if strings.HasPrefix(ch.Name, prefix) {
			ignored++
			continue
		}
		out.add(ch)
	}
	out.settle()
	return out, ignored
}

func (s *CheckSummary) add(ch Check) {
	s.Checks = append(s.Checks, ch)
	s.Total++
	switch ch.State {
	case "success":
		s.Succeeded++
	case "failure":
		s.Failed++
	default:
		s.Pending++
	}
}
