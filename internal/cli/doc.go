// Package cli is the roadmap command line: one file per verb, the flags of each,
// the named exit codes, and the choice between human output and --json.
//
// Main takes everything it touches (arguments, environment, standard streams)
// as parameters, so tests run the real command in-process.
package cli
