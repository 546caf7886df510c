// Package instructions reads the repository's own instructions for agents
// (AGENTS.md, .github/copilot-instructions.md, CLAUDE.md, and a nested
// AGENTS.md nearest the files in focus) from the base commit, masks and
// bounds them, and renders them as one prompt section that the planner, the
// verifier, the implementer and the reviewer all get. It reads the object
// database, never the work tree, so an edit the model makes to these files
// during a Job does not reach that Job's prompts.
package instructions
