// Package scripts holds the tests of the shell scripts beside it: the install
// script every action runs first (scripts/install-roadmap.sh) and the release
// build whose assets it installs (scripts/release.sh). The tests run the real
// scripts with bash against a release server on loopback.
package scripts
