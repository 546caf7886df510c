// Package explain says what ran for an issue, what it cost and what waits:
// it reads the record (roadmap's own comment) and a trace, online
// from GitHub or offline from a saved fake GitHub state and a trace file,
// and renders them for a person (Print) or a script (Output, as JSON).
//
// Everything it prints comes from text anyone with write access can edit,
// so every string passes termText before it reaches a terminal.
package explain
