package review

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// idLen is the length of a finding id in hex digits: short enough to type in
// `/roadmap dismiss ID`, long enough not to collide within a PR.
const idLen = 12

// FindingID is a finding's ledger key: a hash of its file, its quote with
// whitespace normalised, and its kind. The lines and the wording are left
// out, so the same problem raised at other lines or in other words has the
// same id and a closed one is never raised again.
func FindingID(file, quote, kind string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", path.Clean(strings.TrimSpace(file)), normalise(quote), strings.ToLower(strings.TrimSpace(kind)))
	return hex.EncodeToString(h.Sum(nil))[:idLen]
}

// normalise collapses every run of whitespace to one space.
func normalise(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Ledger is the record's finding ledger: id -> how it was closed
// ("repaired", or "dismissed by <login>"). A closed id is never raised
// again. Input.Closed takes it as is.
type Ledger map[string]string

// Repaired is the ledger value of a finding a repair round fixed.
const Repaired = "repaired"

// DismissedBy is the ledger value of a finding a person dismissed.
func DismissedBy(login string) string {
	return "dismissed by " + clean(login, 64)
}

// ValidID reports whether id has the form FindingID gives, so a dismissal
// command cannot write anything else into the ledger.
func ValidID(id string) bool {
	if len(id) != idLen {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// Dismiss closes id as dismissed by login. It refuses an id that is not one.
func (l Ledger) Dismiss(id, login string) error {
	if !ValidID(id) {
		return fmt.Errorf("dismiss %q: not a finding id (%d lower-case hex digits)", clean(id, 40), idLen)
	}
	l[id] = DismissedBy(login)
	return nil
}

// Repair closes as repaired every blocking finding of before that after (the
// review of the repaired head) no longer raises. It returns the ids it
// closed. A finding still raised stays open.
func (l Ledger) Repair(before, after []Finding) []string {
	still := map[string]bool{}
	for _, f := range after {
		still[f.ID] = true
	}
	var closed []string
	for _, f := range before {
		if f.Severity != SeverityBlocking || still[f.ID] || l[f.ID] != "" {
			continue
		}
		l[f.ID] = Repaired
		closed = append(closed, f.ID)
	}
	return closed
}

// Closed reports how id was closed, "" when it is open.
func (l Ledger) Closed(id string) string { return l[id] }
