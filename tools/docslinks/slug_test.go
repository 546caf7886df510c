package docslinks

import (
	"strings"
	"testing"
)

// TestSlug holds Slug to GitHub's rules for heading anchors (github-slugger's,
// on the heading's rendered text): punctuation goes, underscores and hyphens
// stay, each space is a hyphen, code and emphasis markers and links go to
// their text.
func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Quick start", "quick-start"},
		{"What the model can and cannot do to your repository", "what-the-model-can-and-cannot-do-to-your-repository"},
		{"`roadmap:needs-input`: a question waits", "roadmapneeds-input-a-question-waits"},
		{"PR checks: what the watch does with them", "pr-checks-what-the-watch-does-with-them"},
		{"`implement.ci_workflows` and `day_budget`", "implementci_workflows-and-day_budget"},
		{"A **bold** and *em* word", "a-bold-and-em-word"},
		{"See [the record](record.md) — twice", "see-the-record--twice"},
		{"Step 1. Pin it (v0.1.0)", "step-1-pin-it-v010"},
	} {
		if got := Slug(c.heading); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// TestParse: links inside code (a fence or a span) are not links; repeated
// headings are numbered; a link with a title keeps only its target.
func TestParse(t *testing.T) {
	text := strings.Join([]string{
		"# Title",
		"see [a](a.md#x) and `[not](code.md)` and [b](b.md \"title\")",
		"```",
		"[fenced](fenced.md)",
		"## Title",
		"```",
		"## Title",
		"## Title",
	}, "\n")
	p := parse(text)
	var targets []string
	for _, l := range p.Links {
		targets = append(targets, l.Target)
	}
	if got := strings.Join(targets, " "); got != "a.md#x b.md" {
		t.Errorf("links %q, want %q", got, "a.md#x b.md")
	}
	for _, a := range []string{"title", "title-1", "title-2"} {
		if !p.Anchors[a] {
			t.Errorf("no anchor %q in %v", a, p.Anchors)
		}
	}
	if p.Anchors["title-3"] {
		t.Errorf("a heading inside a fence made an anchor: %v", p.Anchors)
	}
}
