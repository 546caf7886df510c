package event

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Event is what started the run.
type Event struct {
	Name       string // issues, issue_comment, workflow_dispatch, pull_request, …
	Action     string // labeled, created, …
	Owner      string
	Repo       string
	Issue      int    // the issue number, from the payload or the dispatch inputs
	Label      string // the label added, for issues.labeled
	Actor      string
	RunID      int64
	RunAttempt int
	SHA        string
	Ref        string
	// Comment is set for issue_comment.
	Comment *Comment
	// Inputs are the workflow_dispatch (or workflow_call) inputs as strings.
	Inputs map[string]string
	// PullRequest is set for pull_request events.
	PullRequest *PullRequest
	// ReviewState is a pull_request_review event's review state
	// (approved, changes_requested, commented).
	ReviewState string
}

// Comment is the comment of an issue_comment event.
type Comment struct {
	ID                int64
	Body              string
	Author            string
	AuthorAssociation string // OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …
	AuthorIsBot       bool
}

// PullRequest is the pull request of a pull_request event.
type PullRequest struct {
	Number  int
	HeadSHA string
	HeadRef string
	BaseRef string
	// HeadRepo and BaseRepo are the repositories' "owner/name"; they differ
	// for a pull request from a fork (whose run gets a read-only token).
	// HeadRepo is "" when the fork was deleted.
	HeadRepo string
	BaseRepo string
}

// maxPayload bounds what is read from GITHUB_EVENT_PATH: GitHub caps webhook
// payloads at 25 MB.
const maxPayload = 25 << 20

// FromEnv builds the Event from the environment and the payload file it names.
// A missing payload file is not an error (act and local runs may not have one);
// a malformed one is.
func FromEnv(getenv func(string) string) (*Event, error) {
	ev := &Event{
		Name:  getenv("GITHUB_EVENT_NAME"),
		Actor: getenv("GITHUB_ACTOR"),
		SHA:   getenv("GITHUB_SHA"),
		Ref:   getenv("GITHUB_REF"),
	}
	if owner, repo, ok := strings.Cut(getenv("GITHUB_REPOSITORY"), "/"); ok {
		ev.Owner, ev.Repo = owner, repo
	}
	if v := getenv("GITHUB_RUN_ID"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("GITHUB_RUN_ID %q is not a number", v)
		}
		ev.RunID = id
	}
	if v := getenv("GITHUB_RUN_ATTEMPT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("GITHUB_RUN_ATTEMPT %q is not a number", v)
		}
		ev.RunAttempt = n
	}
	path := getenv("GITHUB_EVENT_PATH")
	if path == "" {
		return ev, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return ev, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open event payload: %w", err)
	}
	defer f.Close()
	if err := decodePayload(io.LimitReader(f, maxPayload), ev); err != nil {
		return nil, fmt.Errorf("decode event payload %s: %w", path, err)
	}
	return ev, nil
}

// payload holds only the fields roadmap reads.
type payload struct {
	Action string `json:"action"`
	Issue  *struct {
		Number int `json:"number"`
	} `json:"issue"`
	Label *struct {
		Name string `json:"name"`
	} `json:"label"`
	Comment *struct {
		ID                int64  `json:"id"`
		Body              string `json:"body"`
		AuthorAssociation string `json:"author_association"`
		User              *struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
	Inputs map[string]json.RawMessage `json:"inputs"`
	Review *struct {
		State string `json:"state"`
	} `json:"review"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			SHA  string    `json:"sha"`
			Ref  string    `json:"ref"`
			Repo *repoName `json:"repo"`
		} `json:"head"`
		Base struct {
			Ref  string    `json:"ref"`
			Repo *repoName `json:"repo"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository *struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
}

// repoName is a payload's repository, by its full name.
type repoName struct {
	FullName string `json:"full_name"`
}

func (r *repoName) name() string {
	if r == nil {
		return ""
	}
	return r.FullName
}

// Decode reads a webhook payload into ev, keeping what FromEnv already set
// from the environment when the payload lacks it.
func Decode(r io.Reader, ev *Event) error { return decodePayload(r, ev) }

func decodePayload(r io.Reader, ev *Event) error {
	var p payload
	if err := json.NewDecoder(r).Decode(&p); err != nil {
		return err
	}
	ev.Action = p.Action
	if p.Repository != nil && ev.Owner == "" {
		ev.Owner, ev.Repo = p.Repository.Owner.Login, p.Repository.Name
	}
	if p.Issue != nil && p.Issue.Number > 0 {
		ev.Issue = p.Issue.Number
	}
	if p.Label != nil {
		ev.Label = p.Label.Name
	}
	if p.Comment != nil {
		c := &Comment{ID: p.Comment.ID, Body: p.Comment.Body, AuthorAssociation: p.Comment.AuthorAssociation}
		if p.Comment.User != nil {
			c.Author = p.Comment.User.Login
			c.AuthorIsBot = p.Comment.User.Type == "Bot"
		}
		ev.Comment = c
	}
	if p.Review != nil {
		ev.ReviewState = strings.ToLower(p.Review.State)
	}
	if p.PullRequest != nil {
		ev.PullRequest = &PullRequest{
			Number:   p.PullRequest.Number,
			HeadSHA:  p.PullRequest.Head.SHA,
			HeadRef:  p.PullRequest.Head.Ref,
			BaseRef:  p.PullRequest.Base.Ref,
			HeadRepo: p.PullRequest.Head.Repo.name(),
			BaseRepo: p.PullRequest.Base.Repo.name(),
		}
	}
	if len(p.Inputs) > 0 {
		ev.Inputs = map[string]string{}
		for k, raw := range p.Inputs {
			ev.Inputs[k] = inputString(raw)
		}
		if ev.Issue == 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(ev.Inputs["issue"])); err == nil && n > 0 {
				ev.Issue = n
			}
		}
	}
	return nil
}

// inputString turns a dispatch input (a JSON string, number or boolean) into text.
func inputString(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}
