// Package command reads a person's commands on an item into typed values:
// the first line of an issue comment ("/roadmap stop", "/roadmap retry",
// "/roadmap dismiss ID …"), the stop label, a box ticked on the dashboard.
// It decides nothing about who may give one and does nothing: report asks
// GitHub for the person's access and carries the command out.
//
// Each verb is one row of verbs: its word and how the words after it are
// read. A new command is a new row here and its handler in report.
package command
