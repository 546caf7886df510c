package f2p

import (
	"strings"
	"testing"
)

func FuzzParseGoTest(f *testing.F) {
	f.Add(`{"Action":"run","Package":"m","Test":"T"}` + "\n" + `{"Action":"pass","Package":"m","Test":"T"}`)
	f.Add(`{"Action":"fail","Package":"m"}` + "\n" + `{"Action":"run","Package":"m","Test":"T"}`)
	f.Add("garbage\n\n{")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseGoTest(strings.NewReader(s))
		if err != nil {
			return
		}
		for name, tt := range r.Tests {
			if len(name) > MaxNameLen || tt.Name != name {
				t.Fatalf("test %q kept as %q (len %d)", name, tt.Name, len(name))
			}
			if tt.Status != Pass && tt.Status != Fail && tt.Status != Skip {
				t.Fatalf("test %q has status %q", name, tt.Status)
			}
		}
		// A run is never both passing and broken against itself.
		if rep := Compare(r, r); len(rep.Broken) != 0 || len(rep.F2P) != 0 {
			t.Fatalf("Compare(r, r) = %+v", rep)
		}
	})
}

func FuzzParseJUnit(f *testing.F) {
	f.Add(`<testsuite><testcase classname="c" name="n"><failure/></testcase></testsuite>`)
	f.Add(`<testsuites><testsuite><testcase name="a"><skipped/></testcase></testsuite></testsuites>`)
	f.Add(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>`)
	f.Fuzz(func(t *testing.T, s string) {
		r := newResults()
		if err := ParseJUnit(strings.NewReader(s), 4096, "f.xml", r); err != nil {
			return
		}
		if len(s) > 4096 {
			t.Fatalf("a %d-byte document passed the 4096-byte limit", len(s))
		}
		for name, tt := range r.Tests {
			if len(name) > MaxNameLen || tt.Group != "f.xml" {
				t.Fatalf("test %q: %+v", name, tt)
			}
		}
	})
}
