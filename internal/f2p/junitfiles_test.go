package f2p

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The JUnit files a test command wrote are read inside the tree through no
// symlink: a report that is a symlink, or one in a symlinked directory, is
// left out, even when it points at a well-formed report outside.
func TestReadJUnitFollowsNoSymlink(t *testing.T) {
	tree, outside := t.TempDir(), t.TempDir()
	report := func(name string) string {
		return `<testsuite><testcase classname="c" name="` + name + `"/></testsuite>`
	}
	for p, body := range map[string]string{
		filepath.Join(tree, "reports", "real.xml"):   report("inside"),
		filepath.Join(outside, "secret.xml"):         report("outside"),
		filepath.Join(outside, "dir", "another.xml"): report("outside_dir"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"reports/link.xml":  filepath.Join(outside, "secret.xml"),
		"reports/alias.xml": "real.xml",
		"reports/sub":       filepath.Join(outside, "dir"),
		"other":             "reports",
	} {
		if err := os.Symlink(target, filepath.Join(tree, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	for _, glob := range []string{"reports/*.xml", "./reports/*.xml", "reports/*/*.xml", "other/*.xml"} {
		res, files, err := readJUnit(tree, glob)
		if err != nil {
			t.Fatalf("readJUnit(%s): %v", glob, err)
		}
		want := map[string]Status{"c.inside": Pass}
		if glob == "reports/*/*.xml" || glob == "other/*.xml" {
			if files != 0 || len(res.Tests) != 0 {
				t.Errorf("readJUnit(%s) read %d files, %v, through a symlinked directory", glob, files, statuses(res))
			}
			continue
		}
		if diff := cmp.Diff(want, statuses(res)); diff != "" {
			t.Errorf("readJUnit(%s) tests (-want +got):\n%s", glob, diff)
		}
	}
}
