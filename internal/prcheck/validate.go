package prcheck

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/config"
	"github.com/roadmap-dev/roadmap/internal/plan"
)

// PlanRule is a check of the plan beyond plan.Validate's (the plan gates):
// it returns its findings on change changeID under the repository root, each
// File relative to root as plan.Validate's are, and an error only when it
// could not run. A finding that fails (ERROR or WARNING) fails the checks.
// cfg is the trusted configuration (TrustedConfig: the base's, never the
// change's own), so a plan cannot loosen the rules it is checked by.
type PlanRule func(ctx context.Context, root, changeID string, cfg *config.Config) ([]plan.Finding, error)

// validatePlan validates the loaded change as `openspec validate --strict`
// does, with roadmap's own rules, then with each of Options.PlanRules, and
// annotates every finding. Findings name files relative to the repository
// top, as annotations want them.
func (j *job) validatePlan(ctx context.Context) ([]plan.Finding, error) {
	root, id, ok := changeRoot(j.change.Dir)
	if !ok {
		// Not an OpenSpec layout (a --plan elsewhere): OpenSpec cannot
		// read it, and neither could archive.
		f := plan.Finding{Level: plan.LevelError, Rule: "roadmap/plan-location", File: j.relPath(j.change.Dir), Line: 1, Ours: true,
			Message: "the plan is not a change under " + plan.ChangesDir + "/<id>; OpenSpec cannot validate or archive it"}
		j.annotate(f)
		return []plan.Finding{f}, nil
	}
	rep, err := plan.Validate(root, id)
	if err != nil {
		return nil, fmt.Errorf("validate the plan: %w", err)
	}
	found := rep.Findings
	for _, rule := range j.PlanRules {
		fs, err := rule(ctx, root, id, j.cfg)
		if err != nil {
			return nil, fmt.Errorf("plan rules: %w", err)
		}
		found = append(found, fs...)
	}
	out := make([]plan.Finding, 0, len(found))
	for _, f := range found {
		if f.File != "" && !path.IsAbs(f.File) {
			f.File = j.relPath(filepath.Join(root, filepath.FromSlash(f.File)))
		}
		if f.Line < 1 {
			f.Line = 1
		}
		f.Message = j.Masker.Mask(f.Message)
		j.annotate(f)
		out = append(out, f)
	}
	return out, nil
}

// annotate makes a finding an Actions annotation: an ERROR an error, a
// WARNING a warning; an INFO is only in the summary.
func (j *job) annotate(f plan.Finding) {
	msg := f.Rule + ": " + f.Message
	switch f.Level {
	case plan.LevelError:
		j.IO.Error(f.File, f.Line, msg)
	case plan.LevelWarning:
		j.IO.Warning(f.File, f.Line, msg)
	}
}

// changeRoot splits a change directory into the repository root and the
// change id plan.Validate takes: .../ROOT/openspec/changes/ID, where ID may
// be archive/DATE-ID for a change implement archived already.
func changeRoot(dir string) (root, id string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(filepath.ToSlash(abs), "/")
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] != "openspec" || parts[i+1] != "changes" {
			continue
		}
		id = strings.Join(parts[i+2:], "/")
		if id == "" || id == path.Base(plan.ArchiveDir) {
			return "", "", false
		}
		return filepath.Clean(filepath.FromSlash(strings.Join(parts[:i], "/") + "/")), id, true
	}
	return "", "", false
}

// firstFailing is the first finding that fails a strict validation.
func firstFailing(fs []plan.Finding) (plan.Finding, int, bool) {
	var first plan.Finding
	n := 0
	for _, f := range fs {
		if f.Fails() {
			if n == 0 {
				first = f
			}
			n++
		}
	}
	return first, n, n > 0
}
