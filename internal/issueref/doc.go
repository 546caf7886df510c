// Package issueref reads issue references in a person's text: #12,
// owner/repo#34 and an issue URL, each standing alone (not glued to a word,
// a path or an HTML entity), with fenced code and inline code spans left
// unread. It is the one grammar of references: the tracker's task lists
// (internal/tracker) and an item's blockers (internal/blockers) both read
// through it. It decides nothing about what a reference means.
package issueref
