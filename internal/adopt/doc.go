// Package adopt sets a repository up for roadmap (`roadmap init`): it writes
// the caller workflow, the checks workflow and the configuration, creates the
// labels through the API, reads the settings it can, and says in order what a
// person must still do. It changes only what is missing, so a second run
// changes nothing; a file that exists with other content is left as it is.
package adopt
