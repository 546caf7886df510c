package inputerr

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestIs(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", io.EOF, false},
		{"new", New(io.EOF), true},
		{"wrapped", fmt.Errorf("read plan: %w", Errorf("no plan %q", "x")), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Is(c.err); got != c.want {
				t.Errorf("Is(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
	if New(nil) != nil {
		t.Error("New(nil) is not nil")
	}
	if err := New(io.EOF); !errors.Is(err, io.EOF) || err.Error() != io.EOF.Error() {
		t.Errorf("New(io.EOF) = %v: it must read and unwrap as its cause", err)
	}
}
