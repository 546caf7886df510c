package kernel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/git"
	"github.com/roadmap-dev/roadmap/internal/recordstore"
)

// RecordPointerRef is the ref that names issue's record comment
// (recordstore.Pointer): a note commit, like the lease's, whose message
// holds the comment's id. It lives beside the lease, outside refs/heads and
// refs/tags: no push event, no branch in the UI.
func RecordPointerRef(issue int) string { return "refs/roadmap/record/" + strconv.Itoa(issue) }

// recordPointer keeps the record pointer in the Job's remote.
type recordPointer struct {
	repo   *git.Repo
	remote string
}

// Load reads the pointer; the note is anyone's who can push, so a note that
// does not read as one id is no pointer (the store lists instead).
func (p recordPointer) Load(ctx context.Context, n int) (int64, string, error) {
	note, found, err := p.repo.ReadRef(ctx, p.remote, RecordPointerRef(n))
	if err != nil || !found {
		return 0, "", err
	}
	return parsePointer(note.Text, n), note.SHA, nil
}

// Save moves the pointer from version ("" creates it) to id.
func (p recordPointer) Save(ctx context.Context, n int, id int64, version string) (string, error) {
	text := fmt.Sprintf("roadmap record: issue #%d\n\ncomment: %d\n", n, id)
	sha, err := p.repo.SetRefIf(ctx, p.remote, RecordPointerRef(n), version, text)
	var rej *git.PushRejected
	if errors.As(err, &rej) {
		return "", fmt.Errorf("%w: %s", recordstore.ErrPointerMoved, rej.Reason)
	}
	return sha, err
}

// parsePointer reads the comment id of a pointer's note for issue n; 0 when
// the note is not one roadmap wrote for n.
func parsePointer(text string, n int) int64 {
	if len(text) > 4096 {
		return 0
	}
	head, rest, _ := strings.Cut(text, "\n")
	if strings.TrimSpace(head) != fmt.Sprintf("roadmap record: issue #%d", n) {
		return 0
	}
	for _, line := range strings.Split(rest, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "comment: "); ok {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id <= 0 {
				return 0
			}
			return id
		}
	}
	return 0
}

// store is the record store of this Job: its records' pointer is kept in
// the Job's remote.
func (j *Job) store() *recordstore.Store {
	s := recordstore.New(j.O.GitHub)
	if j.O.Repo == nil {
		return s
	}
	return s.WithPointer(recordPointer{repo: j.O.Repo, remote: j.O.Remote})
}
