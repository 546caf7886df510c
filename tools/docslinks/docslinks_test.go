package docslinks

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsLinks reads the README and every page under docs/ and fails on a
// dead link: a relative link to a file or directory that does not exist, or
// an #anchor that no heading of the page it points into makes (GitHub's
// anchor rules, Slug). It also fails on a page under docs/ that no chain of
// links from the README reaches: a page nobody can find is as good as dead.
// Links to other sites are not followed.
func TestDocsLinks(t *testing.T) {
	root := moduleRoot(t)
	files := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(mustRel(t, root, p)))
	}
	parsed := map[string]page{}
	read := func(name string) (page, bool) {
		if p, ok := parsed[name]; ok {
			return p, true
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			return page{}, false
		}
		p := parse(string(b))
		parsed[name] = p
		return p, true
	}

	links := map[string][]string{} // page → the Markdown pages it links to
	var checked int
	for _, name := range files {
		p, ok := read(name)
		if !ok {
			t.Fatalf("read %s", name)
		}
		for _, l := range p.Links {
			target, ok := relative(l.Target)
			if !ok {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			if file == "" {
				file = name
			} else {
				file = path.Clean(path.Join(path.Dir(name), file))
			}
			if strings.HasPrefix(file, "../") {
				t.Errorf("%s:%d: %s leaves the repository", name, l.Line, l.Target)
				continue
			}
			info, err := os.Stat(filepath.Join(root, filepath.FromSlash(file)))
			if err != nil {
				t.Errorf("%s:%d: %s: no such file or directory %s", name, l.Line, l.Target, file)
				continue
			}
			if !strings.HasSuffix(file, ".md") || info.IsDir() {
				continue // a line anchor (#L10) of another file is GitHub's, not a heading
			}
			links[name] = append(links[name], file)
			if anchor == "" {
				continue
			}
			into, _ := read(file)
			if a, err := url.PathUnescape(anchor); err == nil {
				anchor = a
			}
			if !into.Anchors[strings.ToLower(anchor)] {
				t.Errorf("%s:%d: %s: %s has no heading whose anchor is #%s", name, l.Line, l.Target, file, anchor)
			}
		}
	}

	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, to := range links[name] {
			if !reached[to] {
				reached[to] = true
				queue = append(queue, to)
			}
		}
	}
	for _, name := range files {
		if !reached[name] {
			t.Errorf("%s: no chain of links from the README reaches it", name)
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the check read nothing")
	}
	t.Logf("%d pages, %d relative links checked", len(files), checked)
}

// relative is a link's target when it points inside the repository: not
// another site, not mail, not an absolute path.
func relative(target string) (string, bool) {
	if target == "" || strings.HasPrefix(target, "/") {
		return "", false
	}
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return "", false
	}
	if strings.HasPrefix(target, "//") {
		return "", false
	}
	if q := strings.IndexByte(target, '?'); q >= 0 {
		target = target[:q]
	}
	return target, true
}

// moduleRoot is the directory holding go.mod, above the test's own.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func mustRel(t *testing.T, base, target string) string {
	t.Helper()
	rel, err := filepath.Rel(base, target)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}
