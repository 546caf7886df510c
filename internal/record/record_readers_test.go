package record

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reader says who reads a key (seed 000, "Keys with no reader"). Exactly one of:
//
//   - fn: a function under internal/ that acts on the key's value, written
//     "pkg.Func", "pkg.(*Type).Method" or "pkg.Type.Method" (pkg is the directory
//     under internal/, e.g. "implement.(*Runner).resume"). A getter of this
//     package is not a reader: a reader is code that decides something by the value.
//   - person: a line of docs/record.md, verbatim, that keeps the key as a record
//     for a person.
//
// When a later issue adds the code that reads a key, replace its person line with
// the function (and reword the line in docs/record.md).
type reader struct {
	fn     string
	person string
}

// readers is the table TestRecordReaders checks. Keep it true.
func readers() map[Key]reader {
	return map[Key]reader{
		KeyImplementGroup:          {person: "- `implement.group` is a record for a person: the last task group that passed, so a person sees how far the item got (seed 000 keeps group, sha and wip for a person)."},
		KeyImplementSHA:            {person: "- `implement.sha` is a record for a person: the commit of the last group mark, next to implement.group (seed 000)."},
		KeyImplementWIP:            {person: "- `implement.wip` is a record for a person: the WIP commit of a Job that ended mid-group, so a person can look at unfinished work (seed 000)."},
		KeyImplementQuestion:       {fn: "report.(*reporter).ask"},
		KeyImplementResult:         {fn: "report/decide.RunnerClass"},
		KeyImplementFailure:        {fn: "report/decide.RunnerClass"},
		KeyImplementStopped:        {fn: "report.(*reporter).stopStep"},
		KeyImplementAttempt:        {fn: "implement.lastAttempt"},
		KeyImplementCheckLog:       {fn: "implement.(*runner).start"},
		KeyImplementConflict:       {fn: "implement.(*runner).start"},
		KeyImplementSpend:          {fn: "kernel.(*Job).read"},
		KeyImplementSpendEstimated: {fn: "kernel.(*Job).read"},
		KeyImplementCheckedSHA:     {fn: "implement.(*runner).scopedChecks"},
		KeyImplementPublishedSHA:   {fn: "implement.(*runner).groups"},
		KeyImplementMergedBase:     {fn: "implement.(*runner).mergedCheck"},
		KeyImplementKept:           {fn: "implement.(*runner).start"},
		KeyImplementGroupSeconds:   {fn: "implement.(*runner).start"},
		KeyImplementJobs:           {fn: "implement.jobLines"},
		KeyImplementAnswer:         {fn: "implement.(*runner).runGroup"},
		KeyImplementTier:           {fn: "implement.(*runner).runGroup"},
		KeyImplementTrace:          {fn: "explain.RecordTrace"},
		KeyStageState:              {fn: "stage.(*runner).plan"},
		KeyStageRound:              {fn: "stage.(*runner).plan"},
		KeyStageFindings:           {fn: "stage.parseFindings"},
		KeyStageJobs:               {fn: "report.(*reporter).settleStage"},
		KeyStageTrace:              {fn: "explain.RecordTrace"},
		KeyStagePR:                 {fn: "implement.(*runner).start"},
		KeyStagePlan:               {fn: "implement.(*runner).groups"},
		KeyItemStoppedBy:           {fn: "report.(*reporter).decided"},
		KeyItemWakeAt:              {fn: "report.waitingFrom"},
		KeyItemWaitingFor:          {fn: "report.ClaimWaiters"},
		KeyItemBlockedBy:           {fn: "kernel.(*Job).unblock"},
		KeyItemModels:              {fn: "report.modelsLine"},
		KeyImplementParallelism:    {fn: "implement.(*runner).parallelism"},
		KeyImplementReview:         {fn: "report.(*reporter).personDismiss"},
		KeyImplementStrength:       {fn: "implement.(*runner).publishGroup"},
		KeyImplementComments:       {fn: "prfix.Decide"},
	}
}

// repoRoot is the module root, two directories up from this package.
var repoRoot = filepath.Join("..", "..")

func TestRecordReaders(t *testing.T) {
	docPath := filepath.Join(repoRoot, "docs", "record.md")
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("read the spec: %v", err)
	}
	funcs := goFuncs(filepath.Join(repoRoot, "internal"))

	t.Run("AllKeys lists every constant", func(t *testing.T) {
		consts := keyConstants(t, "keys.go")
		if diff := cmp.Diff(consts, AllKeys()); diff != "" {
			t.Errorf("Key constants in keys.go (-) and AllKeys() (+) differ:\n%s", diff)
		}
	})

	t.Run("every key has a reader or a spec line", func(t *testing.T) {
		table := readers()
		for _, p := range checkReaders(AllKeys(), table, string(doc), funcs) {
			t.Error(p)
		}
		for _, k := range AllKeys() {
			r := table[k]
			if r.fn != "" {
				t.Logf("%-26s read by %s", k, r.fn)
			} else if n := docLine(string(doc), r.person); n > 0 {
				t.Logf("%-26s record for a person: %s:%d", k, docPath, n)
			}
		}
	})

	// The check itself must fail for each way a key can lack a reader.
	t.Run("a key with neither fails", func(t *testing.T) {
		fake := Key("test.orphan")
		tests := []struct {
			name  string
			table map[Key]reader
			want  string
		}{
			{"not in the table", map[Key]reader{}, "test.orphan: no reader"},
			{"empty entry", map[Key]reader{fake: {}}, "test.orphan: no reader"},
			{"reader that does not exist", map[Key]reader{fake: {fn: "record.(*Record).readsNothing"}}, "does not exist"},
			{"reader in a package that does not exist", map[Key]reader{fake: {fn: "nosuchpkg.Read"}}, "does not exist"},
			{"malformed reader name", map[Key]reader{fake: {fn: "justaname"}}, "not pkg.Func"},
			{"spec line that is not in the doc", map[Key]reader{fake: {person: "- `test.orphan` is a record for a person."}}, "not a line of docs/record.md"},
			{"both", map[Key]reader{fake: {fn: "record.Parse", person: "x"}}, "both"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				problems := checkReaders([]Key{fake}, tc.table, string(doc), funcs)
				if len(problems) == 0 {
					t.Fatalf("checkReaders() found nothing, want %q", tc.want)
				}
				if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
					t.Errorf("checkReaders() = %q, want one saying %q", problems, tc.want)
				}
			})
		}
		// A reader that exists but does not read the key fails too.
		wrong := map[Key]reader{KeyImplementCheckLog: {fn: "implement.(*runner).scopedChecks"}}
		if p := checkReaders([]Key{KeyImplementCheckLog}, wrong, string(doc), funcs); !strings.Contains(strings.Join(p, "\n"), "does not read it") {
			t.Errorf("checkReaders() on a reader of another key = %q, want one saying it does not read it", p)
		}
		// And a real function and a real line pass.
		ok := map[Key]reader{KeyImplementAnswer: {fn: "implement.(*runner).runGroup"}, KeyImplementCheckedSHA: {fn: "implement.(*runner).scopedChecks"},
			"test.doc": {person: readers()[KeyImplementGroup].person}}
		if p := checkReaders([]Key{KeyImplementAnswer, KeyImplementCheckedSHA, "test.doc"}, ok, string(doc), funcs); len(p) != 0 {
			t.Errorf("checkReaders() on real readers = %q, want nothing", p)
		}
	})
}

// checkReaders returns one problem per key without a valid reader, and one per
// table entry for a key that is not in keys.
func checkReaders(keys []Key, table map[Key]reader, doc string, funcs map[string]*ast.FuncDecl) []string {
	var problems []string
	for _, k := range keys {
		r, ok := table[k]
		switch {
		case !ok || r.fn == "" && r.person == "":
			problems = append(problems, fmt.Sprintf("%s: no reader: name the function that reads it, or a line of docs/record.md that keeps it for a person", k))
		case r.fn != "" && r.person != "":
			problems = append(problems, fmt.Sprintf("%s: names both a reader and a spec line; keep one", k))
		case r.fn != "":
			id, err := funcID(r.fn)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: reader %q: %v", k, r.fn, err))
			} else if fn := funcs[id]; fn == nil {
				problems = append(problems, fmt.Sprintf("%s: reader %s does not exist under internal/ (renamed or removed?)", k, r.fn))
			} else if !readsKey(fn, k) {
				problems = append(problems, fmt.Sprintf("%s: reader %s does not read it (no call of its getter %v, no mention of its constant)", k, r.fn, getters()[k]))
			}
		default:
			if docLine(doc, r.person) == 0 {
				problems = append(problems, fmt.Sprintf("%s: %q is not a line of docs/record.md", k, r.person))
			}
		}
	}
	for k := range table {
		if !slices.Contains(keys, k) {
			problems = append(problems, fmt.Sprintf("%s: in the readers table but not a record.Key", k))
		}
	}
	slices.Sort(problems)
	return problems
}

// docLine returns the 1-based line of doc equal to want (blanks around ignored), or 0.
func docLine(doc, want string) int {
	want = strings.TrimSpace(want)
	if want == "" {
		return 0
	}
	for i, l := range strings.Split(doc, "\n") {
		if strings.TrimSpace(l) == want {
			return i + 1
		}
	}
	return 0
}

// funcID turns "pkg.Func", "pkg.(*T).M" or "pkg.T.M" into the form goFuncs uses:
// "pkg.Func" or "pkg.T.M".
func funcID(name string) (string, error) {
	pkg, rest, ok := strings.Cut(name, ".")
	if !ok || pkg == "" || rest == "" {
		return "", fmt.Errorf("not pkg.Func, pkg.(*Type).Method or pkg.Type.Method")
	}
	if strings.HasPrefix(rest, "(*") {
		typ, method, ok := strings.Cut(strings.TrimPrefix(rest, "(*"), ").")
		if !ok || typ == "" || method == "" {
			return "", fmt.Errorf("not pkg.(*Type).Method")
		}
		return pkg + "." + typ + "." + method, nil
	}
	return pkg + "." + rest, nil
}

// goFuncs lists the functions and methods declared in the non-test Go files of
// each package directory under root, as "pkg.Func" and "pkg.Type.Method" (pkg is
// the directory's path under root, with slashes).
func goFuncs(root string) map[string]*ast.FuncDecl {
	out := map[string]*ast.FuncDecl{}
	fset := token.NewFileSet()
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil // a file another change is writing; its functions are not readers yet
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fn.Recv == nil || len(fn.Recv.List) == 0 {
				out[pkg+"."+fn.Name.Name] = fn
				continue
			}
			if typ := recvType(fn.Recv.List[0].Type); typ != "" {
				out[pkg+"."+typ+"."+fn.Name.Name] = fn
			}
		}
		return nil
	})
	return out
}

// readsKey reports whether fn's body reads k: it calls one of k's getters
// (a method of Record whose body names k's constant) or names the constant
// itself. A reader that stops reading its key fails the check even though
// the function still exists (issue 17, gap 5).
func readsKey(fn *ast.FuncDecl, k Key) bool {
	if fn.Body == nil {
		return false
	}
	constName, getterNames := constNames()[k], getters()[k]
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr: // rec.Answer(): by name only, without type information
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && slices.Contains(getterNames, sel.Sel.Name) {
				found = true
			}
		case *ast.Ident: // KeyImplementX, or record.KeyImplementX
			if constName != "" && x.Name == constName {
				found = true
			}
		}
		return !found
	})
	return found
}

// constNames maps each Key to the name of its constant in keys.go.
func constNames() map[Key]string {
	f, err := parser.ParseFile(token.NewFileSet(), "keys.go", nil, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	out := map[Key]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING && i < len(vs.Names) {
					val, _ := strconv.Unquote(lit.Value)
					out[Key(val)] = vs.Names[i].Name
				}
			}
		}
	}
	return out
}

// getters maps each Key to the methods of Record in accessors.go whose body
// names its constant: Answer for implement.answer, and so on.
func getters() map[Key][]string {
	f, err := parser.ParseFile(token.NewFileSet(), "accessors.go", nil, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	byConst := map[string]Key{}
	for k, name := range constNames() {
		byConst[name] = k
	}
	out := map[Key][]string{}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Body == nil || !fn.Name.IsExported() {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if k, ok := byConst[id.Name]; ok && !slices.Contains(out[k], fn.Name.Name) {
					out[k] = append(out[k], fn.Name.Name)
				}
			}
			return true
		})
	}
	return out
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr: // generic receiver T[P]
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	}
	return ""
}

// keyConstants parses file and returns the values of its constants of type Key,
// sorted, so a constant added without an AllKeys entry is caught.
func keyConstants(t *testing.T, file string) []Key {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var out []Key
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Key" {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s: a Key constant that is not a string literal", file)
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, Key(s))
			}
		}
	}
	slices.Sort(out)
	return out
}
