// Package scripts holds the tests of the shell scripts beside it: the install
// script every action runs first (scripts/install-roadmap.sh), the release notes
// (scripts/release.sh), and the GoReleaser release whose assets the install
// script installs (.goreleaser.yaml, through `make release-check`). The tests
// run the real scripts with bash against a release server on loopback.
package scripts
