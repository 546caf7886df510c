package gates

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/symbols"
	"github.com/roadmap-dev/roadmap/internal/text"
)

// decl is one top-level declaration: Name, or Recv.Name for a method.
type decl struct {
	name string
	file string // slash path
	line int
	lang symbols.Lang
}

// goFile is one parsed Go file of the repository.
type goFile struct {
	rel  string
	dir  string
	pkg  string
	test bool
	fset *token.FileSet
	ast  *ast.File
}

// goIndex is the repository's source, parsed once (bounded): its Go files
// by go/parser, its Python, JavaScript/TypeScript and Rust files by package
// symbols (other).
type goIndex struct {
	module string // the root go.mod's module path; "" without one
	files  []*goFile
	other  []*srcFile
	decls  map[string][]decl // by name (both "Name" and "Recv.Name")
}

// declsIn reads one source file of the work tree and lists its top-level
// declarations.
func (s *state) declsIn(rel string) ([]decl, error) {
	lang := symbols.LangOf(rel)
	if lang == "" {
		return nil, fmt.Errorf("%s is not a Go, Python, JavaScript/TypeScript or Rust file", rel)
	}
	src, err := s.readFile(rel, maxRepoFile)
	if err != nil {
		return nil, fmt.Errorf("%s", readProblem(rel, err))
	}
	if lang != symbols.Go {
		return otherDecls(rel, lang, symbols.Declarations(rel, src)), nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if f == nil {
		return nil, fmt.Errorf("%s does not parse as Go: %s", rel, text.Safe(err.Error(), 200))
	}
	return topDecls(fset, rel, f), nil
}

// topDecls is a parsed Go file's declarations as the gates name them:
// Name, or Recv.Name for a method.
func topDecls(fset *token.FileSet, rel string, f *ast.File) []decl {
	var out []decl
	for _, d := range symbols.GoFileDecls(fset, f) {
		name := d.Name
		if d.Kind == "method" && d.Recv != "" {
			name = d.Recv + "." + d.Name
		}
		out = append(out, decl{name: name, file: rel, line: d.Line, lang: symbols.Go})
	}
	return out
}

var moduleRe = lazyRegexp(`(?m)^module[ \t]+"?([^\s"]+)"?`)

// goSource reads every source file of the repository once, at most
// maxRepoBytes in all.
func (s *state) goSource() *goIndex {
	if s.gosrc != nil {
		return s.gosrc
	}
	s.walk()
	ix := &goIndex{decls: map[string][]decl{}}
	if mod, err := s.readFile("go.mod", 1<<20); err == nil {
		if m := moduleRe().FindSubmatch(mod); m != nil {
			ix.module = string(m[1])
		}
	}
	total := 0
	for _, rel := range s.files {
		lang := symbols.LangOf(rel)
		if lang == "" || strings.Contains("/"+rel, "/testdata/") {
			continue
		}
		src, err := s.readFile(rel, maxRepoFile)
		if err != nil {
			continue
		}
		if total += len(src); total > maxRepoBytes {
			break
		}
		if lang != symbols.Go {
			ix.addOther(rel, lang, src)
			continue
		}
		fset := token.NewFileSet()
		f, _ := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if f == nil || f.Name == nil {
			continue
		}
		gf := &goFile{rel: rel, dir: path.Dir(rel), pkg: f.Name.Name, test: strings.HasSuffix(rel, "_test.go"), fset: fset, ast: f}
		ix.files = append(ix.files, gf)
		if gf.test {
			continue
		}
		for _, d := range topDecls(fset, rel, f) {
			ix.decls[d.name] = append(ix.decls[d.name], d)
		}
	}
	s.gosrc = ix
	return ix
}

// importPath is the import path of the package in dir, "" without a module.
func (ix *goIndex) importPath(dir string) string {
	if ix.module == "" {
		return ""
	}
	if dir == "." {
		return ix.module
	}
	return ix.module + "/" + dir
}

// use is one reference to a symbol.
type use struct {
	file string
	fn   string // the enclosing top-level function ("" at top level)
	line int
	test bool
}

// uses finds the references to declaration d across the repository's Go
// files: in d's own package an identifier of its name (a selector of it for
// a method), elsewhere a selector through the package's import name (any
// selector of a method's name in a file that imports the package). The
// declaration itself is not a use.
func (ix *goIndex) uses(d decl) []use {
	if d.lang != symbols.Go {
		return ix.textUses(d)
	}
	name, method := d.name, false
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name, method = name[i+1:], true
	}
	dir := path.Dir(d.file)
	ipath := ix.importPath(dir)
	var out []use
	for _, f := range ix.files {
		same := f.dir == dir && strings.TrimSuffix(f.pkg, "_test") == ix.pkgOf(dir)
		local := ""
		if !same || strings.HasSuffix(f.pkg, "_test") {
			local = importName(f.ast, ipath)
			if local == "" && !same {
				continue
			}
		}
		external := strings.HasSuffix(f.pkg, "_test") || !same
		for _, top := range f.ast.Decls {
			fn := ""
			if fd, ok := top.(*ast.FuncDecl); ok {
				fn = fd.Name.Name
				if fd.Recv != nil && len(fd.Recv.List) == 1 {
					if r := symbols.RecvName(fd.Recv.List[0].Type); r != "" {
						fn = r + "." + fn
					}
				}
			}
			sels := map[*ast.Ident]bool{} // a field or another package's name, never a use of ours
			ast.Inspect(top, func(n ast.Node) bool {
				var at token.Pos
				switch x := n.(type) {
				case *ast.SelectorExpr:
					sels[x.Sel] = true
					if x.Sel.Name != name {
						return true
					}
					if method {
						at = x.Sel.Pos()
					} else if id, ok := x.X.(*ast.Ident); ok && external && id.Name == local {
						at = x.Sel.Pos()
					}
				case *ast.Ident:
					if !method && !external && x.Name == name && !sels[x] {
						at = x.Pos()
					}
				}
				if at == token.NoPos {
					return true
				}
				p := f.fset.Position(at)
				if f.rel == d.file && p.Line == d.line {
					return true // the declaration itself
				}
				out = append(out, use{file: f.rel, fn: fn, line: p.Line, test: f.test})
				return true
			})
		}
	}
	return out
}

// pkgOf is the package name of the non-test files in dir.
func (ix *goIndex) pkgOf(dir string) string {
	for _, f := range ix.files {
		if f.dir == dir && !f.test {
			return f.pkg
		}
	}
	for _, f := range ix.files {
		if f.dir == dir {
			return strings.TrimSuffix(f.pkg, "_test")
		}
	}
	return ""
}

// importName is the name file f refers to ipath by, "" when it does not
// import it (or ipath is "").
func importName(f *ast.File, ipath string) string {
	if ipath == "" {
		return ""
	}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || p != ipath {
			continue
		}
		if im.Name != nil {
			if im.Name.Name == "_" || im.Name.Name == "." {
				return ""
			}
			return im.Name.Name
		}
		return path.Base(p)
	}
	return ""
}

// resolve finds the declarations a backticked identifier names: `Name`,
// `Name()`, `Type.Method` (`Type::method` in Rust), `pkg.Name` (pkg a
// package's name or directory's base name; for another language also the
// file's, a Python or JavaScript module). Identifiers of one or two
// characters are not resolved: too many words are one.
func (ix *goIndex) resolve(span string) []decl {
	span = strings.TrimSpace(span)
	if i := strings.IndexByte(span, '('); i > 0 && strings.HasSuffix(span, ")") {
		span = span[:i]
	}
	if strings.Count(span, "::") == 1 {
		span = strings.Replace(span, "::", ".", 1)
	}
	if !goSymbolRe().MatchString(span) || len(span) < 3 {
		return nil
	}
	if ds := ix.decls[span]; len(ds) > 0 {
		return ds
	}
	i := strings.IndexByte(span, '.')
	if i < 0 {
		return nil
	}
	qual, name := span[:i], span[i+1:]
	var out []decl
	for _, d := range ix.decls[name] {
		dir := path.Dir(d.file)
		module := d.lang != symbols.Go && strings.TrimSuffix(path.Base(d.file), path.Ext(d.file)) == qual
		if path.Base(dir) == qual || ix.pkgOf(dir) == qual || module {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].file < out[b].file })
	return out
}
