package retry

import (
	"net/http"
	"testing"
	"time"
)

func TestExp(t *testing.T) {
	var got []time.Duration
	for n := range 8 {
		got = append(got, Exp(time.Second, 30*time.Second, n))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("Exp(1s, 30s, n) = %v, want %v seconds", got, want)
		}
	}
	if got := Exp(time.Second, 30*time.Second, 1<<20); got != 30*time.Second {
		t.Errorf("Exp after many attempts = %v, want the ceiling", got)
	}
}

func TestAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{" 1.5 ", 1500 * time.Millisecond, true},
		{"-1", 0, false},
		{"1e12", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
	} {
		h := http.Header{}
		if tt.in != "" {
			h.Set("Retry-After", tt.in)
		}
		got, ok := After(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("After(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
