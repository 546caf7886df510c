package recordstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/roadmap-dev/roadmap/internal/githubfake"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// memPointer is a record pointer in memory with the semantics of the git
// ref the kernel keeps (a save from a version the pointer has left is
// refused). down makes every Load and Save fail, as a remote that does not
// answer.
type memPointer struct {
	mu    sync.Mutex
	ids   map[int]int64
	vers  map[int]int
	down  bool
	loads int
}

func newMemPointer() *memPointer { return &memPointer{ids: map[int]int64{}, vers: map[int]int{}} }

func (p *memPointer) version(n int) string {
	if p.vers[n] == 0 {
		return ""
	}
	return fmt.Sprint(p.vers[n])
}

func (p *memPointer) Load(_ context.Context, n int) (int64, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loads++
	if p.down {
		return 0, "", errors.New("the remote does not answer")
	}
	return p.ids[n], p.version(n), nil
}

func (p *memPointer) Save(_ context.Context, n int, id int64, version string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return "", errors.New("the remote does not answer")
	}
	if version != p.version(n) {
		return "", ErrPointerMoved
	}
	p.vers[n]++
	p.ids[n] = id
	return p.version(n), nil
}

func (p *memPointer) at(n int) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ids[n]
}

// TestRecordPointer: with a pointer, a create is checked against it instead
// of lists (no list before or after it), a fresh read finds the record by
// it whatever the issue's comments number, two creates that both land end
// in one record (the pointer's), a pointer naming anyone else's comment is
// passed over for the list (and moved to the record the list finds), and a
// pointer that cannot be read leaves the store to its lists.
func TestRecordPointer(t *testing.T) {
	spend := func(calls int) record.Spend { return record.Spend{USD: 0.25 * float64(calls), ModelCalls: calls} }
	t.Run("create and a fresh read", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		p := newMemPointer()
		rc := NoRecord()
		if err := e.s.WithPointer(p).Write(ctx, n, &rc, addSpend(record.Spend{}, spend(1), 1), testView); err != nil {
			t.Fatal(err)
		}
		if p.at(n) != rc.ID || rc.ID == 0 {
			t.Fatalf("the pointer holds %d, the record is %d", p.at(n), rc.ID)
		}
		for i := range 250 {
			e.fake.AddComment(n, "bob", fmt.Sprintf("comment %d", i))
		}
		got, err := New(e.client(t)).WithPointer(p).Read(ctx, n, 0)
		if err != nil || got.ID != rc.ID {
			t.Fatalf("fresh read: %+v, %v; want record %d", got, err, rc.ID)
		}
		if c := e.count(epList); c != 0 {
			t.Errorf("%d lists of the comments, want none: the pointer is the look before the create, the check after it and the fresh read", c)
		}
	})
	t.Run("both creates land", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		p := newMemPointer()
		a, b := New(e.client(t)).WithPointer(p), New(e.client(t)).WithPointer(p)
		ra, rb := NoRecord(), NoRecord()
		var once sync.Once
		// B's whole first write happens while A's create is on its way:
		// both looked at the pointer before either saved it.
		e.fake.AddFault(githubfake.Rule{Method: "POST", Path: createPath, Call: 1, Before: func() {
			once.Do(func() {
				if err := b.Write(ctx, n, &rb, addSpend(record.Spend{}, spend(2), 2), testView); err != nil {
					t.Errorf("B: %v", err)
				}
			})
		}})
		if err := a.Write(ctx, n, &ra, addSpend(record.Spend{}, spend(1), 1), testView); err != nil {
			t.Fatal(err)
		}
		if c := e.count(epCreate); c != 2 {
			t.Fatalf("%d creates, want both writers' to land", c)
		}
		recs := recordComments(e, n)
		if len(recs) != 1 || recs[0].ID != p.at(n) || ra.ID != rb.ID || ra.ID != recs[0].ID {
			t.Fatalf("records %d (the pointer %d, A %d, B %d), want one, named by all", len(recs), p.at(n), ra.ID, rb.ID)
		}
		got, _ := record.Parse(recs[0].Body)
		if sp := spendOf(t, got); sp.ModelCalls != 3 {
			t.Errorf("spend %+v, want both Jobs' 3 calls", sp)
		}
	})
	t.Run("a pointer to someone else's comment", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		rc := NoRecord()
		if err := e.s.Write(ctx, n, &rc, addSpend(record.Spend{}, spend(1), 1), testView); err != nil {
			t.Fatal(err)
		}
		forged, _ := e.fake.AddComment(n, "mallory", "<!-- roadmap:record v1\nimplement.spend: {\"usd\":0,\"model_calls\":0}\n-->")
		p := newMemPointer()
		p.Save(ctx, n, forged, "")
		got, err := New(e.client(t)).WithPointer(p).Read(ctx, n, 0)
		if err != nil || got.ID != rc.ID {
			t.Fatalf("read: %+v, %v; want roadmap's record %d, not mallory's %d", got, err, rc.ID, forged)
		}
		if p.at(n) != rc.ID {
			t.Errorf("the pointer still names %d, want the record the list found, %d", p.at(n), rc.ID)
		}
	})
	t.Run("a pointer that cannot be read", func(t *testing.T) {
		e := newEnv(t, githubfake.Options{})
		n := e.fake.CreateIssue(githubfake.Issue{Title: "t"})
		e.fake.AddComment(n, "alice", "please do this")
		p := newMemPointer()
		p.down = true
		s := e.s.WithPointer(p)
		rc, err := s.Read(ctx, n, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, n, &rc, addSpend(record.Spend{}, spend(1), 1), testView); err != nil {
			t.Fatal(err)
		}
		if recs := recordComments(e, n); len(recs) != 1 || e.count(epList) < 2 {
			t.Errorf("%d records after %d lists: want one, found and checked by lists", len(recs), e.count(epList))
		}
	})
}
