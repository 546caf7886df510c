package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/roadmap-dev/roadmap/internal/github"
)

// StateFile is the name `roadmap demo --keep DIR` saves the fake GitHub's
// state under, in DIR.
const StateFile = "github-state.json"

// SavedState is the part of a saved fake GitHub state the console reads:
// the comments, and the jobs with their logs. It is decoded field by field
// here, so production code never imports the fake (internal/deptest).
type SavedState struct {
	CommentList []struct {
		ID     int64  `json:"id"`
		Issue  int    `json:"issue"`
		Author string `json:"author"`
		Body   string `json:"body"`
	} `json:"comments"`
	JobList []struct {
		ID         int64     `json:"id"`
		RunID      int64     `json:"run_id"`
		Name       string    `json:"name"`
		Status     string    `json:"status"`
		Conclusion string    `json:"conclusion"`
		Log        string    `json:"log"`
		StartedAt  time.Time `json:"started_at"`
	} `json:"jobs"`
}

// ReadState reads the saved state at path: the file, or a directory
// holding StateFile.
func ReadState(path string) (*SavedState, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, StateFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read saved state: %w", err)
	}
	var st SavedState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read saved state %s: %w", path, err)
	}
	return &st, nil
}

// Comments lists issue n's saved comments, oldest first.
func (s *SavedState) Comments(_ context.Context, n int) ([]github.Comment, error) {
	var out []github.Comment
	for _, c := range s.CommentList {
		if c.Issue == n {
			out = append(out, github.Comment{ID: c.ID, Author: c.Author, Body: c.Body})
		}
	}
	return out, nil
}

// Identity is the login a client of the fake writes as by default.
func (s *SavedState) Identity() string { return github.DefaultIdentity }

// RunJobs lists run runID's saved jobs.
func (s *SavedState) RunJobs(_ context.Context, runID int64) ([]github.WorkflowJob, error) {
	var out []github.WorkflowJob
	for _, j := range s.JobList {
		if j.RunID == runID {
			out = append(out, github.WorkflowJob{ID: j.ID, Name: j.Name, Status: j.Status, Conclusion: j.Conclusion, StartedAt: j.StartedAt})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("list jobs of run %d: %w", runID, github.ErrNotFound)
	}
	return out, nil
}

// JobLog answers as GitHub does: a completed job's log, else not found.
func (s *SavedState) JobLog(_ context.Context, jobID int64) (io.ReadCloser, error) {
	for _, j := range s.JobList {
		if j.ID == jobID && j.Status == "completed" {
			return io.NopCloser(strings.NewReader(j.Log)), nil
		}
	}
	return nil, fmt.Errorf("download log of job %d: %w", jobID, github.ErrNotFound)
}
