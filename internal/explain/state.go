package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
)

// StateFile is the name `roadmap demo --keep DIR` saves the fake GitHub's
// state under, in DIR.
const StateFile = "github-state.json"

// savedState is the part of a saved fake GitHub state that explain reads:
// the issues and their comments. The file is what the fake's Save writes
// (`roadmap demo --keep DIR`, `roadmap dev fake-github --state F`); it is
// decoded here, field by field, so that reading it starts nothing fake and
// production code never imports the fake (internal/deptest
// TestFakeStaysOut). Every other field of the file is left unread.
type savedState struct {
	Issues   map[int]savedIssue `json:"issues"`
	Comments []savedComment     `json:"comments"`
}

type savedIssue struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

type savedComment struct {
	ID     int64  `json:"id"`
	Issue  int    `json:"issue"`
	Author string `json:"author"`
	Body   string `json:"body"`
}

// readState reads the saved state at path: the state file, or a directory
// holding StateFile.
func readState(path string) (*savedState, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, StateFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read saved state: %w", err)
	}
	var st savedState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read saved state %s: %w", path, err)
	}
	return &st, nil
}

// Issue answers as GitHub would for issue n: github.ErrNotFound when the
// state has no such issue (or pull request).
func (s *savedState) Issue(_ context.Context, n int) (github.Issue, error) {
	is, ok := s.Issues[n]
	if !ok {
		return github.Issue{}, fmt.Errorf("get issue %d: %w", n, github.ErrNotFound)
	}
	return github.Issue{Number: n, Title: is.Title, Body: is.Body}, nil
}

// Record finds issue n's record among its saved comments by the rule
// GitHub's reader uses (recordstore.From); the comments are kept oldest
// first, as the fake lists them. id is not needed: the comments are all here.
func (s *savedState) Record(_ context.Context, n int, _ int64) (recordstore.RecordComment, error) {
	var list []github.Comment
	for _, cm := range s.Comments {
		if cm.Issue == n {
			list = append(list, github.Comment{ID: cm.ID, Author: cm.Author, Body: cm.Body})
		}
	}
	return recordstore.From(n, list, s.Identity())
}

// Identity is the login the saved record comments were written as: the
// identity a client of the fake has by default.
func (s *savedState) Identity() string { return github.DefaultIdentity }
