package deptest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRecordOnlyThroughStore: every reader and writer of the record goes
// through internal/recordstore (issue 46, item 1). The store alone renders a
// record comment and sends it: a package that wrote one itself would skip
// the precondition protocol and the look before a create, and make the
// second record that the store exists to prevent.
//
// The rule, read with go/ast from every non-test Go file of the module but
// the store's own (and internal/record, which defines the renderers):
//   - no method is named WriteRecord, ReadRecord, RecordFrom or Records
//     (the protocol and the repository-wide reader that once lived in the
//     GitHub client);
//   - no file calls record.RenderComment or record.Update (a record
//     comment's body is made by the store);
//   - no function both calls a comment-writing method (CreateComment,
//     EditComment, UpsertMarkerComment) and names the record (a call of
//     record.Render, or the record block's opener "roadmap:record"); a
//     person's edit played on the fake GitHub (a receiver named fake) is a
//     world's, not roadmap's.
//
// Each offender is named by file and line.
func TestRecordOnlyThroughStore(t *testing.T) {
	t.Run("the rule", testRecordBypassRule)
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var offenders []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal/recordstore" || rel == "internal/record" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		files++
		offenders = append(offenders, recordBypasses(fset, f, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files; is the module root right?", files)
	}
	for _, o := range offenders {
		t.Errorf("%s", o)
	}
	if len(offenders) > 0 {
		t.Logf("%d way(s) around the record store: read and write the record with internal/recordstore", len(offenders))
	}
}

// recordBypasses names the places in f (at rel) that read or write the
// record without the store.
func recordBypasses(fset *token.FileSet, f *ast.File, rel string) []string {
	recordPkg := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == module+"/internal/record" {
			recordPkg = "record"
			if im.Name != nil {
				recordPkg = im.Name.Name
			}
		}
	}
	var out []string
	at := func(n ast.Node, what string) {
		out = append(out, fmt.Sprintf("%s:%d: %s", rel, fset.Position(n.Pos()).Line, what))
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		if slices.Contains([]string{"WriteRecord", "ReadRecord", "RecordFrom", "Records"}, fn.Name.Name) && fn.Recv != nil {
			at(fn, fmt.Sprintf("method %s: the record's protocol lives in internal/recordstore", fn.Name.Name))
		}
		if fn.Body == nil {
			continue
		}
		var writes, names []ast.Node
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && recordPkg != "" && id.Name == recordPkg {
					switch sel.Sel.Name {
					case "RenderComment", "Update":
						at(n, fmt.Sprintf("record.%s: only the record store makes a record comment's body", sel.Sel.Name))
					case "Render":
						names = append(names, n)
					}
				}
				if slices.Contains([]string{"CreateComment", "EditComment", "UpsertMarkerComment"}, sel.Sel.Name) && !onFake(sel.X) {
					writes = append(writes, n)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING && strings.Contains(n.Value, "roadmap:record") {
					names = append(names, n)
				}
			}
			return true
		})
		if len(writes) > 0 && len(names) > 0 {
			at(writes[0], fmt.Sprintf("%s writes a comment and names the record: write the record with internal/recordstore", fn.Name.Name))
		}
	}
	return out
}

// onFake reports whether x is the fake GitHub (an identifier or field named
// fake or Fake): a world playing a person's edit, not roadmap writing.
func onFake(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return strings.EqualFold(x.Name, "fake")
	case *ast.SelectorExpr:
		return strings.EqualFold(x.Sel.Name, "fake")
	}
	return false
}

// testRecordBypassRule runs the rule on a planted file: each way around the
// store is named, and the store's legitimate neighbours are not.
func testRecordBypassRule(t *testing.T) {
	const planted = `package x

import (
	"context"

	rec "github.com/roadmap-dev/roadmap/internal/record"
)

type Client struct{}

func (c *Client) WriteRecord() {} // offends (line 11)

func mark(ctx context.Context, c *Client, r *rec.Record) {
	body, _ := rec.RenderComment(r) // offends (line 14)
	c.EditComment(ctx, 1, body)
}

func first(ctx context.Context, c *Client, r *rec.Record) {
	block, _ := rec.Render(r)
	c.CreateComment(ctx, 1, "x\n"+block) // offends (line 20)
}

func literal(ctx context.Context, c *Client) {
	c.CreateComment(ctx, 1, "<!-- roadmap:record v1\n-->") // offends (line 24)
}

func person(w struct{ fake *Client }) {
	w.fake.EditComment(1, "<!-- roadmap:record v1\nperson.note: x\n-->")
}

func status(ctx context.Context, c *Client) {
	c.UpsertMarkerComment(ctx, 1, "<!-- roadmap:status -->", "ok")
}

func RecordFrom() {}

func (c *Client) Records() {} // offends (line 37)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", planted, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, o := range recordBypasses(fset, f, "planted.go") {
		lines = append(lines, strings.SplitN(o, ":", 3)[1])
	}
	want := []string{"11", "14", "20", "24", "37"}
	if !slices.Equal(lines, want) {
		t.Errorf("offending lines %v, want %v", lines, want)
	}
}
