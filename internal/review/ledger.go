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

// Repaired is the ledger value of a finding a repair round fixed.
const Repaired = "repaired"
