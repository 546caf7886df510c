// Package nofollow opens the files of a directory tree that someone with
// fewer rights writes (the work tree the model edits) from a process with
// more (roadmap, as root), without ever following a symlink there.
//
// Every path is taken inside an *os.Root one element at a time, and each
// directory and file opened is checked to be the very entry it names, not a
// symlink: an element that is a symlink is refused, also when it is swapped
// for one while it is being opened (a process left behind by a tool command
// can do that in a loop). os.Root alone keeps I/O inside the tree; this keeps
// it to the path that was named, so a symlink in the tree cannot redirect a
// read or a write to another file of the tree either (its .git, for one).
//
// Resolve is for callers that accept symlinks inside the tree: it replaces
// them by what they point to, refusing one that leads out, and the result is
// then opened with the functions here, which refuse it if it changed since.
package nofollow
