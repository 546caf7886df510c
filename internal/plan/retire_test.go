package plan

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestArchiveRetireCapability archives the retire-* cases of testdata/openspec:
// a change that removes the last requirement of a capability deletes its main
// spec (and the folders left empty) only with `retire_capabilities: true`,
// and otherwise is refused with the OpenSpec CLI's own hint. Where the pinned
// CLI can run, each case is archived by it too, on a copy of the same tree:
// the trees must be byte-identical and the CLI must print every refusal.
func TestArchiveRetireCapability(t *testing.T) {
	bin := ""
	if _, err := exec.LookPath("node"); err == nil {
		bin = openspecCLI(t)
	} else {
		t.Log("Node.js is not on PATH: checking Archive alone, not against the OpenSpec CLI")
	}
	const (
		mainSpec = "openspec/specs/notifications/spec.md"
		hint     = "This change removes the last requirement 'notifications' has. To retire the capability and delete its spec, add `retire_capabilities: true` to the change's .openspec.yaml (alongside its `schema:`, which that file requires), then rerun."
		noReqs   = "Validation errors in rebuilt spec for notifications (will not write changes): Spec must have at least one requirement"
	)
	tests := []struct {
		name     string
		archived bool
		gone     []string // paths that must not exist afterwards
		kept     []string // paths that must
		messages []string // the refusal's findings, in order
	}{
		{name: "retire-capability", archived: true,
			gone: []string{mainSpec, "openspec/specs/notifications"}, kept: []string{"openspec/specs"}},
		{name: "retire-capability-nested", archived: true,
			gone: []string{"openspec/specs/identity/user-auth/spec.md", "openspec/specs/identity"}, kept: []string{"openspec/specs"}},
		{name: "retire-capability-partial", archived: true, kept: []string{mainSpec}},
		{name: "retire-capability-already-gone", archived: true, gone: []string{"openspec/specs/notifications"}},
		{name: "removed-last-requirement", kept: []string{"openspec/specs/notifications/spec.md"},
			messages: []string{noReqs, hint}},
		{name: "retire-capability-invalid-marker", kept: []string{mainSpec},
			messages: []string{noReqs, hint + " The marker present now cannot be honored (retire_capabilities: Invalid input: expected boolean, received string)."}},
		{name: "retire-capability-unaccounted", kept: []string{mainSpec},
			messages: []string{noReqs, "'notifications' declares retire_capabilities, but the spec holds content the merge cannot safely account for and deleting the file would take with it: \"## Notes\", \"Digest timing is agreed with support; ask them before changing it.\". Move it into `## Purpose` or a canonical requirement, or delete the spec by hand."}},
		{name: "retire-capability-blocked", kept: []string{mainSpec},
			messages: []string{noReqs, "This change removes the last requirement 'notifications' has, so the rebuilt spec has none left and cannot be written. Retiring the capability is what archive does instead, and it is refused while the spec holds content the merge cannot safely account for and deleting the file would take with it: \"Digests go out on Monday mornings, local time.\". Move it into `## Purpose` or a canonical requirement, or delete the spec by hand, then rerun."}},
	}
	dir, _ := corpus(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ours := copyTree(t, filepath.Join(dir, tt.name))
			theirs := copyTree(t, filepath.Join(dir, tt.name))
			id := onlyChange(t, ours)
			// The CLI first: roadmap archives with the day it ran.
			ans := cliAnswer{Ran: time.Now()}
			if bin != "" {
				ans = askCLI(t, bin, theirs, "archive", id, "--yes")
			}
			findings, err := Archive(ours, id, ans.Ran)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range findings {
				got = append(got, f.Message)
			}
			if diff := cmp.Diff(tt.messages, got); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
			_, err = os.Stat(ChangeDir(ours, id))
			if archived := os.IsNotExist(err); archived != tt.archived {
				t.Errorf("archived = %v, want %v", archived, tt.archived)
			}
			for _, p := range tt.gone {
				if _, err := os.Stat(filepath.Join(ours, p)); !os.IsNotExist(err) {
					t.Errorf("%s is still there (%v)", p, err)
				}
			}
			for _, p := range tt.kept {
				if _, err := os.Stat(filepath.Join(ours, p)); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
			if bin == "" {
				return
			}
			out, stderr, code := ans.Stdout, ans.Stderr, ans.Code
			said := string(out) + string(stderr)
			if diff := cmp.Diff(snapshot(t, theirs), snapshot(t, ours)); diff != "" {
				t.Errorf("trees differ (-openspec +roadmap):\n%s\nopenspec said (exit %d):\n%s", diff, code, said)
			}
			for _, m := range got {
				// The CLI prints the rebuilt spec's errors under one heading
				// and each hint on its own line.
				m = strings.TrimPrefix(m, "Validation errors in rebuilt spec for notifications (will not write changes): ")
				if !strings.Contains(said, m) {
					t.Errorf("openspec did not say %q:\n%s", m, said)
				}
			}
		})
	}
}

// TestArchiveRetireVeto archives, with the marker, specs whose last
// requirement goes together with content of every shape a deletion might take
// unnamed, or might wrongly be thought to: wrapped and lazy bullets, fences,
// tables, setext and HTML headings, notes. Archive and the pinned CLI must
// both retire or both refuse, leaving byte-identical trees.
func TestArchiveRetireVeto(t *testing.T) {
	bin := openspecCLI(t)
	const head = "# notifications Specification\n\n## Purpose\nTell users about events in their account by email so nothing is missed.\n"
	const req = "\n## Requirements\n### Requirement: Email on login\nThe system SHALL send an email when a new device logs in.\n\n#### Scenario: New device\n- **WHEN** a user logs in from a new device\n- **THEN** an email is sent\n"
	specs := map[string]string{
		"plain":             head + req,
		"wrapped-bullet":    head + strings.Replace(req, "- **THEN** an email is sent\n", "- **THEN** an email is sent\n  to the account address\n", 1),
		"lazy-bullet":       head + strings.Replace(req, "- **THEN** an email is sent\n", "- **THEN** an email is sent\nto the account address\n", 1),
		"plus-bullets":      head + strings.ReplaceAll(req, "- **", "+ **"),
		"ordered-bullets":   head + strings.Replace(strings.Replace(req, "- **WHEN**", "1. **WHEN**", 1), "- **THEN**", "2. **THEN**", 1),
		"note-after":        head + req + "\nAsk support before changing this.\n",
		"bullet-note-after": head + req + "\n- Ask support before changing this.\n",
		"table":             head + strings.Replace(req, "logs in.\n", "logs in.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", 1),
		"fence":             head + strings.Replace(req, "logs in.\n", "logs in.\n\n```\n### Requirement: not one\n```\n", 1),
		"inner-heading":     head + req + "\n### Notes\nkept by hand\n",
		"setext-in-purpose": head + "More\n----\nA section of its own.\n" + req,
		"html-heading":      head + "<h2>Extra</h2>\n" + req,
		"second-title":      head + "# Another title\n" + req,
		"preamble":          head + strings.Replace(req, "## Requirements\n", "## Requirements\nRead these first.\n\n", 1),
		"after-section":     head + req + "\n## Notes\nkept\n",
		"purpose-prose":     head + "A second paragraph of purpose.\n" + req,
		"statement-bullets": head + strings.Replace(req, "logs in.\n", "logs in.\n- from any device\n", 1),
		"crlf":              strings.ReplaceAll(head+req, "\n", "\r\n"),
	}
	const delta = "## REMOVED Requirements\n\n- `### Requirement: Email on login`\n"
	retired := 0
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			build := func() string {
				root := t.TempDir()
				files := map[string]string{
					"openspec/specs/notifications/spec.md":                   spec,
					"openspec/changes/retire-it/.openspec.yaml":              "schema: spec-driven\nretire_capabilities: true\n",
					"openspec/changes/retire-it/proposal.md":                 "## Why\n\nNotifications moved to the account service, so this repository sends none.\n\n## What Changes\n\n- Remove notifications.\n",
					"openspec/changes/retire-it/tasks.md":                    "## 1. Remove\n\n- [ ] 1.1 Remove the notifications; verify: `true`\n",
					"openspec/changes/retire-it/specs/notifications/spec.md": delta,
				}
				for p, c := range files {
					p = filepath.Join(root, p)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return root
			}
			ours, theirs := build(), build()
			ans := askCLI(t, bin, theirs, "archive", "retire-it", "--yes")
			out, stderr, code := ans.Stdout, ans.Stderr, ans.Code
			findings, err := Archive(ours, "retire-it", ans.Ran)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(snapshot(t, theirs), snapshot(t, ours)); diff != "" {
				t.Errorf("trees differ (-openspec +roadmap), roadmap said %v:\n%s\nopenspec said (exit %d):\n%s%s", findings, diff, code, out, stderr)
			}
			for _, f := range findings {
				m := strings.TrimPrefix(f.Message, "Validation errors in rebuilt spec for notifications (will not write changes): ")
				if !strings.Contains(string(out)+string(stderr), m) {
					t.Errorf("openspec did not say %q:\n%s%s", m, out, stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(ours, "openspec/specs/notifications")); os.IsNotExist(err) {
				retired++
			}
		})
	}
	t.Logf("%d of %d specs retired", retired, len(specs))
	if retired == 0 || retired == len(specs) {
		t.Errorf("%d of %d specs retired; the cases should both retire and refuse", retired, len(specs))
	}
}
