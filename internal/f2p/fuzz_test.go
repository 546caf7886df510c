package f2p

import (
	"os"
	"path/filepath"
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
	f.Add(`<testsuite><testcase classname="" name=""/><testcase classname="x" name="x"><error/><skipped/></testcase></testsuite>`)
	// The shapes of pytest, jest-junit and cargo-nextest.
	samples, _ := filepath.Glob(filepath.Join("testdata", "junit", "*.xml"))
	for _, p := range samples {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := newResults()
		if err := ParseJUnit(strings.NewReader(s), 4096, "f.xml", r); err != nil {
			return
		}
		if len(s) > 4096 {
			t.Fatalf("a %d-byte document passed the 4096-byte limit", len(s))
		}
		for name, tt := range r.Tests {
			if name == "" || len(name) > MaxNameLen || tt.Name != name || tt.Group != "f.xml" {
				t.Fatalf("test %q: %+v", name, tt)
			}
			if tt.Status != Pass && tt.Status != Fail && tt.Status != Skip {
				t.Fatalf("test %q has status %q", name, tt.Status)
			}
		}
		if rep := Compare(r, r); len(rep.Broken) != 0 || len(rep.F2P) != 0 {
			t.Fatalf("Compare(r, r) = %+v", rep)
		}
	})
}

// The command a model may have written says where its JUnit file is: a
// detected glob never leaves the tree and names only that file.
func FuzzDetectJUnit(f *testing.F) {
	for _, s := range []string{
		"pytest --junitxml=reports/out.xml", "python -m pytest --junit-xml ../x.xml", "pytest --junitxml=/etc/passwd",
		"npx jest --reporters=jest-junit", "pytest --junitxml=a[1]*.xml", "pytest --junitxml", "pytest --junitxml=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g := DetectJUnit(strings.Fields(s))
		if g == "" {
			return
		}
		if err := checkGlob(g); err != nil {
			t.Fatalf("DetectJUnit(%q) = %q, which checkGlob refuses: %v", s, g, err)
		}
	})
}
