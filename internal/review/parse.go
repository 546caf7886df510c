package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what a model's answer can make of findings. An entry past them is
// dropped with a reason, never truncated into something it did not say
// (except the free text of title, trigger and reason, which is cut).
const (
	// maxEntries is how many entries of an answer are read; the rest are
	// dropped, counted.
	maxEntries = 50
	// maxEntryBytes bounds one entry's JSON.
	maxEntryBytes = 8 << 10
	maxPathBytes  = 300
	maxTitle      = 200
	maxTrigger    = 600
	maxReason     = 600
	// maxQuote bounds the quoted code: a quote is a line or a few lines.
	maxQuote = 2000
	// maxLine and maxSpan bound the line range.
	maxLine = 1_000_000
	maxSpan = 400
)

// Kinds a finding can have.
var kinds = map[string]bool{"bug": true, "security": true, "test": true, "plan": true}

// Severity is how much a finding matters: a blocking finding stops the
// change from being marked ready.
type Severity string

// The severities.
const (
	SeverityBlocking Severity = "blocking"
	SeverityAdvisory Severity = "advisory"
)

// Finding is one problem the review found in the head of a change.
type Finding struct {
	// ID is FindingID(File, Quote, Kind): the ledger's key.
	ID string `json:"id"`
	// File is the path relative to the repository root; Start and End the
	// head's lines the quote is on.
	File     string   `json:"file"`
	Start    int      `json:"start"`
	End      int      `json:"end"`
	Severity Severity `json:"severity"`
	// Kind is bug, security, test or plan.
	Kind    string `json:"kind"`
	Title   string `json:"title"`
	Trigger string `json:"trigger"`
	// Quote is code copied from the head file.
	Quote string `json:"quote"`
	// Refuted is why the refutation pass refuted the finding (then it is
	// advisory).
	Refuted string `json:"refuted,omitempty"`
}

// Dropped is a finding the review did not keep, and why.
type Dropped struct {
	Finding Finding `json:"finding"`
	Reason  string  `json:"reason"`
}

// wireFinding is an entry as a model writes it: every field loose, so one
// wrong type drops the entry with a reason instead of the whole answer.
type wireFinding struct {
	File     any `json:"file"`
	Start    any `json:"start"`
	End      any `json:"end"`
	Severity any `json:"severity"`
	Kind     any `json:"kind"`
	Title    any `json:"title"`
	Trigger  any `json:"trigger"`
	Quote    any `json:"quote"`
}

// ParseFindings reads the reviewer's answer: a JSON array of findings. It
// returns the well-formed findings, with their ids, and the entries it
// dropped with the reason. An answer that is not an array is one dropped
// entry. It never panics on what the model wrote.
func ParseFindings(answer string) ([]Finding, []Dropped) {
	entries, err := splitArray(answer)
	if err != nil {
		return nil, []Dropped{{Reason: "the answer is not a JSON array of findings: " + clean(err.Error(), maxReason)}}
	}
	var out []Finding
	var dropped []Dropped
	for i, raw := range entries {
		if i == maxEntries {
			dropped = append(dropped, Dropped{Reason: fmt.Sprintf("%d more entries past the first %d were not read", len(entries)-maxEntries, maxEntries)})
			break
		}
		f, err := parseEntry(raw)
		if err != nil {
			dropped = append(dropped, Dropped{Finding: f, Reason: fmt.Sprintf("entry %d: %v", i+1, err)})
			continue
		}
		out = append(out, f)
	}
	return out, dropped
}

// splitArray reads answer as a JSON array without decoding its entries.
func splitArray(answer string) ([]json.RawMessage, error) {
	a := strings.TrimSpace(answer)
	if a == "" {
		return nil, fmt.Errorf("empty")
	}
	var entries []json.RawMessage
	dec := json.NewDecoder(strings.NewReader(a))
	if err := dec.Decode(&entries); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("text after the array")
	}
	if entries == nil && a != "[]" {
		return nil, fmt.Errorf("null")
	}
	return entries, nil
}

// parseEntry reads and checks one entry. On an error the finding holds what
// could be read, for the dropped list.
func parseEntry(raw json.RawMessage) (Finding, error) {
	if len(raw) > maxEntryBytes {
		return Finding{}, fmt.Errorf("%d bytes is more than %d", len(raw), maxEntryBytes)
	}
	var w wireFinding
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return Finding{}, fmt.Errorf("not an object: %s", clean(err.Error(), 200))
	}
	var f Finding
	var errs []string
	str := func(name string, v any) string {
		s, ok := v.(string)
		if !ok && v != nil {
			errs = append(errs, name+" is not a string")
		}
		return s
	}
	f.File = clean(str("file", w.File), maxPathBytes+1)
	f.Kind = strings.ToLower(strings.TrimSpace(str("kind", w.Kind)))
	f.Severity = Severity(strings.ToLower(strings.TrimSpace(str("severity", w.Severity))))
	f.Title = clean(str("title", w.Title), maxTitle)
	f.Trigger = clean(str("trigger", w.Trigger), maxTrigger)
	quote := str("quote", w.Quote)
	f.Quote = cleanQuote(quote)
	f.Start = lineNumber("start", w.Start, &errs)
	f.End = lineNumber("end", w.End, &errs)
	if len(errs) > 0 {
		return f, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if err := check(&f, quote); err != nil {
		return f, err
	}
	f.ID = FindingID(f.File, f.Quote, f.Kind)
	return f, nil
}

// check validates a finding's fields once they are read.
func check(f *Finding, rawQuote string) error {
	if err := checkPath(f.File); err != nil {
		return err
	}
	switch f.Severity {
	case SeverityBlocking, SeverityAdvisory:
	case "":
		return fmt.Errorf("no severity")
	default:
		return fmt.Errorf("severity %q is neither blocking nor advisory", clean(string(f.Severity), 40))
	}
	if !kinds[f.Kind] {
		return fmt.Errorf("kind %q is not one of bug, security, test, plan", clean(f.Kind, 40))
	}
	if strings.TrimSpace(f.Title) == "" {
		return fmt.Errorf("no title")
	}
	if strings.TrimSpace(f.Trigger) == "" {
		return fmt.Errorf("no trigger scenario")
	}
	if len(rawQuote) > maxQuote {
		return fmt.Errorf("the quote is %d bytes, more than %d", len(rawQuote), maxQuote)
	}
	if normalise(f.Quote) == "" {
		return fmt.Errorf("no quote")
	}
	if f.Start == 0 {
		f.Start = 1
	}
	if f.End == 0 {
		f.End = f.Start
	}
	if f.End < f.Start || f.End-f.Start > maxSpan {
		return fmt.Errorf("lines %d-%d are not a range of at most %d lines", f.Start, f.End, maxSpan)
	}
	return nil
}

// checkPath accepts a clean relative slash path inside the tree.
func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("no file")
	case len(p) > maxPathBytes:
		return fmt.Errorf("the file path is longer than %d bytes", maxPathBytes)
	case strings.ContainsAny(p, "\\\x00") || path.IsAbs(p):
		return fmt.Errorf("file %q is not a relative path", p)
	}
	c := path.Clean(p)
	if c != p || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return fmt.Errorf("file %q is not a clean path inside the work tree", p)
	}
	if c == ".git" || strings.HasPrefix(c, ".git/") {
		return fmt.Errorf("file %q is inside .git", p)
	}
	return nil
}

// lineNumber reads a line number: an integer, or a string holding one.
func lineNumber(name string, v any, errs *[]string) int {
	var s string
	switch x := v.(type) {
	case nil:
		return 0
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		*errs = append(*errs, name+" is not a line number")
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLine {
		*errs = append(*errs, fmt.Sprintf("%s %q is not a line number", name, clean(s, 20)))
		return 0
	}
	return n
}

// verdict is the refuter's answer on one finding.
type verdict struct {
	refuted bool
	reason  string
}

// parseVerdicts reads the refuter's answer: a JSON array of {id, verdict,
// reason}. Entries it cannot read, for unknown ids or with another verdict
// are ignored: a finding without a readable refutation stands.
func parseVerdicts(answer string, ids map[string]bool) map[string]verdict {
	entries, err := splitArray(answer)
	if err != nil {
		return nil
	}
	out := map[string]verdict{}
	for i, raw := range entries {
		if i == maxEntries || len(raw) > maxEntryBytes {
			break
		}
		var w struct {
			ID      any `json:"id"`
			Verdict any `json:"verdict"`
			Reason  any `json:"reason"`
		}
		if json.Unmarshal(raw, &w) != nil {
			continue
		}
		id, _ := w.ID.(string)
		v, _ := w.Verdict.(string)
		reason, _ := w.Reason.(string)
		id = strings.TrimSpace(id)
		if !ids[id] {
			continue
		}
		if _, seen := out[id]; seen {
			continue // the first verdict on an id counts
		}
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "refuted":
			reason = clean(reason, maxReason)
			if strings.TrimSpace(reason) == "" {
				continue // a refutation without evidence does not count
			}
			out[id] = verdict{refuted: true, reason: reason}
		case "upheld":
			out[id] = verdict{reason: clean(reason, maxReason)}
		}
	}
	return out
}

// clean keeps printable text on one line, cut to max bytes on a rune
// boundary.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		if unicode.Is(unicode.Cf, r) {
			return -1 // bidi overrides and zero-width characters
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	return cut(s, max)
}

// cleanQuote keeps a quote's lines and tabs (it is matched against code) and
// strips every other control character. It is bounded by check, not cut.
func cleanQuote(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
}

func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
