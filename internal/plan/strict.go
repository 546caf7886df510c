package plan

import (
	"errors"
)

// roadmapChecks are roadmap's rules where OpenSpec is silent or lenient. Each
// names a mistake that `openspec validate --strict` lets through and that
// costs a failed archive or a wasted implement run later.
func (v *validation) roadmapChecks() {
	for _, d := range v.deltas {
		file := d.Doc.Path
		// OpenSpec only notes these (INFO) and drops the block that follows
		// into the requirement above it.
		for _, s := range d.Skipped {
			v.addOurs(LevelError, "stray-header", file, s.Line, "\"### %s\" in %s is not a \"### Requirement:\" header; OpenSpec ignores it and what follows it joins the requirement above", s.Header, s.Section)
		}
		for _, list := range [][]*Requirement{d.Added, d.Modified} {
			for _, r := range list {
				labelled := false
				full, _ := countScenarios(r)
				for _, s := range r.Scenarios {
					if s.Empty {
						v.addOurs(LevelError, "empty-scenario", file, s.Line, "scenario \"%s\" of requirement \"%s\" has no steps; add \"- **WHEN** ...\" and \"- **THEN** ...\" lines", s.Name, r.Name)
					}
					labelled = labelled || s.Labelled
				}
				if full > 0 && !labelled {
					v.addOurs(LevelError, "scenario-header", file, r.Line, "requirement \"%s\" has no \"#### Scenario:\" header; its level-4 headers are not labelled as scenarios", r.Name)
				}
			}
		}
		v.unknownNames(d)
		v.retirement(d)
	}
	v.verifyCommands()
}

// retirement reports a delta that removes the last requirement of a
// capability in a way archive will refuse: without retire_capabilities, or
// with content the deletion would take. OpenSpec's validate is silent; its
// archive aborts, at the end of an implement run.
func (v *validation) retirement(d *DeltaSpec) {
	if len(d.Removed) == 0 {
		return
	}
	target, err := readMain(v.t, d.Capability)
	if err != nil || target == nil {
		return
	}
	m, err := mergeDelta(d, target, v.id)
	if err != nil {
		return // archive-blocker and the other rules say why
	}
	declared, invalid := v.meta.flag("retire_capabilities")
	if m.outcome(true, declared) != outcomeWrite || len(specErrors(m.rebuilt)) == 0 {
		return
	}
	for _, hint := range m.retireHints(d.Capability, true, declared, invalid) {
		v.addOurs(LevelError, "retire-capability", d.Doc.Path, 1, "archive will refuse this change: %s", hint)
	}
}

// unknownNames reports MODIFIED, REMOVED and RENAMED names that the main spec
// does not have. OpenSpec's validate is silent on them: archive then aborts on
// a MODIFIED or RENAMED, and a REMOVED silently does nothing.
func (v *validation) unknownNames(d *DeltaSpec) {
	if len(d.Modified)+len(d.Removed)+len(d.Renamed) == 0 {
		return
	}
	target, err := readMain(v.t, d.Capability)
	if err != nil {
		return
	}
	main := map[string]bool{}
	where := "the main spec " + SpecsDir + "/" + d.Capability + "/spec.md"
	if target == nil {
		where = "any main spec: " + SpecsDir + "/" + d.Capability + "/spec.md does not exist"
	} else {
		for _, r := range ParseMainSpec(target, d.Capability).Requirements {
			main[r.Name] = true
		}
	}
	renamedTo := map[string]bool{}
	for _, r := range d.Renamed {
		if !main[r.From] {
			v.addOurs(LevelError, "unknown-requirement", d.Doc.Path, r.FromLine, "RENAMED FROM \"%s\" is not a requirement of %s", r.From, where)
		} else {
			renamedTo[r.To] = true
		}
	}
	for _, r := range d.Removed {
		if !main[r.Name] {
			v.addOurs(LevelError, "unknown-requirement", d.Doc.Path, r.Line, "REMOVED \"%s\" is not a requirement of %s", r.Name, where)
		}
	}
	for _, r := range d.Modified {
		if !main[r.Name] && !renamedTo[r.Name] {
			v.addOurs(LevelError, "unknown-requirement", d.Doc.Path, r.Line, "MODIFIED \"%s\" is not a requirement of %s", r.Name, where)
		}
	}
}

// verifyCommands holds tasks.md to the plan contract implement executes
// (DESIGN §2): numbered groups of numbered tasks, and a verify command in
// every group.
func (v *validation) verifyCommands() {
	file := v.rel + "/tasks.md"
	src, err := v.t.readFile(v.rel + "/tasks.md")
	if err != nil {
		v.addOurs(LevelError, "tasks", file, 1, "the change has no readable tasks.md; implement runs a plan's task groups from it")
		return
	}
	tasks, err := Parse(src)
	var list ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			v.addOurs(LevelError, "tasks", file, e.Line, "%s", e.Msg)
		}
	}
	if tasks == nil {
		return
	}
	for _, g := range tasks.Groups {
		if len(g.Tasks) > 0 && len(g.VerifyCommands()) == 0 {
			v.addOurs(LevelError, "verify-command", file, g.Line, "group %d (%s) has no verify command; end a task with verify: `command`", g.Number, g.Title)
		}
	}
}
