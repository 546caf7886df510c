package symbols

import (
	"go/ast"
	"go/parser"
	"go/token"
)

// goDecls reads a Go file with Go's own parser.
func goDecls(file string, src []byte) []Decl {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	return GoFileDecls(fset, f)
}

// GoFileDecls lists the top-level declarations of a Go file already parsed
// (the plan gates parse each file once and read its uses too), at most
// MaxDecls.
func GoFileDecls(fset *token.FileSet, f *ast.File) []Decl {
	var c collector
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			decl := Decl{Name: d.Name.Name, Kind: "func", Line: line(d.Name.Pos()), End: line(d.End())}
			if d.Recv != nil && len(d.Recv.List) == 1 {
				decl.Kind, decl.Recv = "method", RecvName(d.Recv.List[0].Type)
			}
			c.add(decl)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					c.add(Decl{Name: s.Name.Name, Kind: "type", Line: line(s.Name.Pos()), End: line(s.End())})
				case *ast.ValueSpec:
					for _, n := range s.Names {
						c.add(Decl{Name: n.Name, Kind: d.Tok.String(), Line: line(n.Pos()), End: line(s.End())})
					}
				}
			}
		}
	}
	return c.out
}

// RecvName is the type name of a method receiver: T, *T, T[P], *T[P].
func RecvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
