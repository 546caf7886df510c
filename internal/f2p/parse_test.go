package f2p

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func statuses(r *Results) map[string]Status {
	out := map[string]Status{}
	for n, t := range r.Tests {
		out[n] = t.Status
	}
	return out
}

func TestParseGoTest(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestOK","Elapsed":0}`,
		`{"Action":"run","Package":"m/a","Test":"TestBad"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestBad"}`,
		`{"Action":"run","Package":"m/a","Test":"TestSkip"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestSkip"}`,
		`not json: a test printed this`,
		`{"Action":"run","Package":"m/a","Test":"TestSub/case_1"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSub/case_1"}`,
		`{"Action":"run","Package":"m/a","Test":"TestDied"}`,
		`{"Action":"fail","Package":"m/a"}`,
		`{"Action":"build-fail","ImportPath":"m/b [m/b.test]"}`,
		`{"Action":"fail","Package":"m/b","FailedBuild":"m/b [m/b.test]"}`,
		`{"Action":"pass","Package":"m/c"}`,
		`{"Action":"pass","Package":"m/c","Test":"TestLong` + strings.Repeat("x", MaxLine) + `"}`,
		`{"Action":"pass","Package":"m/c","Test":"TestAfterLong"}`,
	}, "\n")
	r, err := ParseGoTest(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"m/a.TestOK": Pass, "m/a.TestBad": Fail, "m/a.TestSkip": Skip,
		"m/a.TestSub/case_1": Pass, "m/a.TestDied": Fail, "m/c.TestAfterLong": Pass}
	if diff := cmp.Diff(want, statuses(r)); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	// m/a failed through its tests; m/b failed as a whole (it did not build).
	if diff := cmp.Diff(map[string]bool{"m/b": true}, r.FailedGroups); diff != "" {
		t.Errorf("failed groups (-want +got):\n%s", diff)
	}
}

func TestParseJUnit(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="suite">
    <testcase classname="tests.test_api" name="test_ok" time="0.1"/>
    <testcase classname="tests.test_api" name="test_bad"><failure message="boom">trace</failure></testcase>
    <testcase classname="tests.test_api" name="test_err"><error/></testcase>
    <testcase name="bare"><skipped/></testcase>
    <testsuite name="nested"><testcase classname="n" name="deep"><system-out>x</system-out></testcase></testsuite>
  </testsuite>
</testsuites>`
	r := newResults()
	if err := ParseJUnit(strings.NewReader(doc), 1<<20, "report.xml", r); err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"tests.test_api.test_ok": Pass, "tests.test_api.test_bad": Fail,
		"tests.test_api.test_err": Fail, "bare": Skip, "n.deep": Pass}
	if diff := cmp.Diff(want, statuses(r)); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}

	for name, bad := range map[string]string{
		"too long":   doc,
		"too deep":   strings.Repeat("<a>", MaxJUnitDepth+1) + strings.Repeat("</a>", MaxJUnitDepth+1),
		"not closed": `<testsuite><testcase name="x">`,
		"not xml":    `{"json": true}`,
		"bad entity": `<testsuite><testcase name="&xx;"/></testsuite>`,
	} {
		limit := int64(1 << 20)
		if name == "too long" {
			limit = 100
		}
		if err := ParseJUnit(strings.NewReader(bad), limit, "f.xml", newResults()); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCompare(t *testing.T) {
	base := newResults()
	head := newResults()
	for _, x := range []struct {
		r     *Results
		name  string
		group string
		st    Status
	}{
		{base, "a.TestKept", "a", Pass}, {head, "a.TestKept", "a", Pass},
		{base, "a.TestFixed", "a", Fail}, {head, "a.TestFixed", "a", Pass},
		{head, "a.TestNew", "a", Pass},
		{base, "a.TestSkipped", "a", Skip}, {head, "a.TestSkipped", "a", Pass},
		{base, "a.TestBroke", "a", Pass}, {head, "a.TestBroke", "a", Fail},
		{base, "b.TestGoneWithBuild", "b", Pass},
		{base, "a.TestRemoved", "a", Pass},
		{head, "a.TestStillRed", "a", Fail},
	} {
		if err := x.r.set(Test{Name: x.name, Group: x.group, Status: x.st}); err != nil {
			t.Fatal(err)
		}
	}
	head.FailedGroups["b"] = true
	got := Compare(base, head)
	want := Report{
		F2P:     []string{"a.TestFixed", "a.TestNew", "a.TestSkipped"},
		P2P:     []string{"a.TestKept"},
		Broken:  []string{"a.TestBroke", "b.TestGoneWithBuild"},
		Failing: []string{"a.TestStillRed"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}

	delete(base.Tests, "a.TestBroke")
	delete(base.Tests, "b.TestGoneWithBuild")
	if got := Compare(base, head); !got.Passed {
		t.Errorf("no broken test and three F2P: Passed = false (%+v)", got)
	}
	if got := Compare(head, head); got.Passed {
		t.Errorf("no F2P test: Passed = true (%+v)", got)
	}
}

func TestIsTestFile(t *testing.T) {
	for p, want := range map[string]bool{
		"internal/webhook/backoff_test.go": true,
		"tests/expect.txt":                 true,
		"pkg/testdata/in.json":             true,
		"src/__tests__/a.js":               true,
		"app/foo.test.ts":                  true,
		"app/foo.spec.js":                  true,
		"test_backoff.py":                  true,
		"backoff_spec.rb":                  true,
		"src/main/BackoffTest.java":        true,
		"BackoffTests.cs":                  true,
		"internal/webhook/backoff.go":      false,
		"contest.go":                       false,
		"latest/notes.md":                  false,
		"Test":                             false,
		"docs/testing.md":                  false,
	} {
		if got := IsTestFile(p); got != want {
			t.Errorf("IsTestFile(%q) = %v, want %v", p, got, want)
		}
	}
}
