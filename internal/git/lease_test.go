package git

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestSetRefIfOneCreateWins: clones that create one note ref at the same
// moment, each from its own work tree as two Jobs would, end with exactly
// one create taken; the rest are refused, and the ref holds the winner's
// note. A set against a stale value and a delete of a ref another moved are
// refused too; a delete at the right value removes it.
func TestSetRefIfOneCreateWins(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	const ref = "refs/roadmap/lease/7"
	const n = 6
	repos := make([]*Repo, n)
	for i := range repos {
		repos[i] = w.open(fmt.Sprintf("job-%d", i))
	}
	var wg sync.WaitGroup
	shas := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range repos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			shas[i], errs[i] = repos[i].SetRefIf(ctx, "origin", ref, "", fmt.Sprintf("holder %d", i))
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		var rej *PushRejected
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("creates %d and %d both taken", winner, i)
		case err == nil:
			winner = i
		case !errors.As(err, &rej):
			t.Errorf("create %d: %v, want a *PushRejected", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no create was taken: %v", errs)
	}
	reader := repos[(winner+1)%n]
	note, found, err := reader.ReadRef(ctx, "origin", ref)
	if err != nil || !found || note.SHA != shas[winner] || note.Text != fmt.Sprintf("holder %d", winner) {
		t.Fatalf("ReadRef = %+v, %v, %v; want the winner's note %s", note, found, err, shas[winner])
	}

	// A create that comes after the winner's, when the remote already
	// advertises the ref, is refused too: the race above may let every
	// create read the ref as absent, and this one may not.
	var rej *PushRejected
	if _, err := reader.SetRefIf(ctx, "origin", ref, "", "second"); !errors.As(err, &rej) {
		t.Fatalf("a create over the winner's ref: %v, want refused", err)
	}
	if _, err := reader.SetRefIf(ctx, "origin", ref, "0123456789012345678901234567890123456789", "late"); !errors.As(err, &rej) {
		t.Errorf("a set against a stale value: %v, want refused", err)
	}
	moved, err := reader.SetRefIf(ctx, "origin", ref, note.SHA, "taken over")
	if err != nil {
		t.Fatalf("a set at the ref's value: %v", err)
	}
	if err := repos[winner].DeleteRefIf(ctx, "origin", ref, shas[winner]); !errors.As(err, &rej) {
		t.Errorf("the first holder's delete after the take-over: %v, want refused", err)
	}
	if err := reader.DeleteRefIf(ctx, "origin", ref, moved); err != nil {
		t.Fatalf("delete at the ref's value: %v", err)
	}
	if _, found, err := reader.ReadRef(ctx, "origin", ref); err != nil || found {
		t.Errorf("after the delete ReadRef found %v (%v), want nothing", found, err)
	}
	if _, err := reader.SetRefIf(ctx, "origin", "refs/heads/main", "", "x"); err == nil {
		t.Error("SetRefIf wrote refs/heads/main: only refs/roadmap/… are note refs")
	}
}
