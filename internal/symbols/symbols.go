package symbols

import (
	"path"
	"strings"
)

// Lang is a language the index reads.
type Lang string

const (
	Go     Lang = "Go"
	Python Lang = "Python"
	JS     Lang = "JavaScript/TypeScript"
	Rust   Lang = "Rust"
)

// Bounds on what one file costs: a larger file declares nothing here, and
// at most MaxDecls declarations are taken from one.
const (
	MaxFile  = 2 << 20
	MaxDecls = 10000
)

var exts = map[string]Lang{
	".go": Go,
	".py": Python, ".pyi": Python,
	".js": JS, ".jsx": JS, ".mjs": JS, ".cjs": JS, ".ts": JS, ".tsx": JS, ".mts": JS, ".cts": JS,
	".rs": Rust,
}

// LangOf is the language of file by its extension, "" for one the index does
// not read.
func LangOf(file string) Lang { return exts[strings.ToLower(path.Ext(file))] }

// Decl is one declaration of a file.
type Decl struct {
	Name string
	// Recv is the type a method belongs to (Go's receiver type, a Python or
	// JavaScript class, a Rust impl's type or a trait); "" for the other
	// kinds.
	Recv string
	// Kind is the declaration's kind in the words of its language: func,
	// method, type, const, var (Go); class, const, var (Python, by the
	// UPPER_CASE convention for const); class, interface, enum, let
	// (JavaScript/TypeScript); struct, enum, union, trait, static, mod,
	// macro (Rust).
	Kind string
	// Line is the line of its name; End the last line of its body as the
	// scanner sees it (Line for a declaration without a body).
	Line, End int
}

// Qualified is Recv.Name for a method, Name otherwise.
func (d Decl) Qualified() string {
	if d.Recv != "" {
		return d.Recv + "." + d.Name
	}
	return d.Name
}

// Declarations are the declarations of file (its language by its
// extension), in source order: top-level functions, types, classes,
// constants and variables, and the methods of top-level types. A file of
// another language, or larger than MaxFile, declares nothing; so does a Go
// file that does not parse.
func Declarations(file string, src []byte) []Decl {
	if len(src) > MaxFile {
		return nil
	}
	switch LangOf(file) {
	case Go:
		return goDecls(file, src)
	case Python:
		return pythonDecls(blankPython(src))
	case JS:
		return jsDecls(blankJS(src))
	case Rust:
		return rustDecls(blankRust(src))
	}
	return nil
}

// Code is src with its comments and the contents of its string literals
// replaced by spaces (line breaks kept, so lines and byte offsets are
// src's), for a text search that should see only code. For Go, and a file
// of another language, it is src itself.
func Code(file string, src []byte) []byte {
	switch LangOf(file) {
	case Python:
		return blankPython(src)
	case JS:
		return blankJS(src)
	case Rust:
		return blankRust(src)
	}
	return src
}

func identStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func identPart(c byte) bool  { return identStart(c) || '0' <= c && c <= '9' }

// ident is the identifier at the start of s ("" if none).
func ident(s string) string {
	if s == "" || !identStart(s[0]) {
		return ""
	}
	i := 1
	for i < len(s) && identPart(s[i]) {
		i++
	}
	return s[:i]
}

// word cuts the keyword kw and the blanks after it from the start of s: ok
// only when kw stands there as a whole word.
func word(s, kw string) (rest string, ok bool) {
	if !strings.HasPrefix(s, kw) || len(s) > len(kw) && identPart(s[len(kw)]) {
		return s, false
	}
	return strings.TrimLeft(s[len(kw):], " \t"), true
}

// lines splits code into lines without their line breaks (a "\r" before one
// is kept off too).
func lines(code []byte) []string {
	ls := strings.Split(string(code), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// collector gathers at most MaxDecls declarations.
type collector struct{ out []Decl }

func (c *collector) add(d Decl) int {
	if len(c.out) >= MaxDecls || d.Name == "" || d.Name == "_" {
		return -1
	}
	if d.End < d.Line {
		d.End = d.Line
	}
	c.out = append(c.out, d)
	return len(c.out) - 1
}
