// Package unidiff reads the unified diff `git diff` prints into small domain
// types: per file its paths on both sides and its hunks, each hunk's lines
// with their op. Parsing is sourcegraph/go-diff's, which knows git's extended
// headers, quoted (octal-escaped) paths and renames, where a hand parser
// breaks. The strength check reads the added lines from it, the review
// renders it for a model.
package unidiff
