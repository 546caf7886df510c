// Package symbols finds the top-level declarations of a source file — its
// functions, classes, structs and other types, methods, and constants — in
// Go, Python, JavaScript/TypeScript and Rust, for the planner's symbol index
// and the callers-and-tests gate.
//
// Go files are read by go/parser. The other languages are read by a
// declaration scanner of their own: a lexer blanks comments and the contents
// of string literals (Code), then a line-based scanner reads the declaration
// lines that are left, tracking Python's indentation and the braces of
// JavaScript and Rust (class bodies, impl and trait blocks, inline modules).
// Scanners, not parsers: they need no cgo and no language runtime on the
// runner, so the release's CGO_ENABLED=0 cross-builds are unchanged, and
// they read any file, valid or not, without failing. What they cannot see is
// listed in docs/stage.md ("What the symbol index does not see").
//
// The files are written by a model or a stranger: every function here takes
// any bytes, is linear in them, bounds what it returns (MaxFile, MaxDecls)
// and never panics.
package symbols
