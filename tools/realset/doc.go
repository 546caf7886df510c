// Package realset gives a real-world eval case (internal/eval/realcase) its
// code: the module at base_version, from the Go module proxy, or a Debian
// source's upstream tarball, becomes the case's repo/, and the hidden test
// files at fix_version its hidden/; Check then runs the hidden tests the
// SWE-bench way (docs/eval.md, "The real-world set with code"). It
// downloads sources, so it is a tool of the proving floor (`roadmap-dev
// eval fetch`, `make eval-real`), never part of the roadmap binary.
package realset
