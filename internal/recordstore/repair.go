package recordstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/roadmap-dev/roadmap/internal/github"
	"github.com/roadmap-dev/roadmap/internal/record"
)

// A record block a person broke (a malformed line, a bad value, a lost
// `-->`) is never fatal to a reader or a writer of the store: the block is
// salvaged (record.Salvage) — every line that still reads is kept, a
// person's valid edits with them, and a writer takes what the block lost
// from the record as it last read or wrote it — and the next write lands
// the repaired block. The store then says on the issue, in one comment it
// keeps up to date (RepairMarker), which lines it could not read and what
// it kept, and logs a repair_record recovery line. A read-only store writes
// nothing: it reads a broken block as an error that names the line.

// readBlock reads a record comment's body. With salvage (a writing store) a
// broken block is salvaged and the repair it needs returned; without (a
// read-only store, From) it is Parse's error, which names the line, as
// `roadmap record show` and `roadmap explain` tell a person.
func readBlock(body string, salvage bool) (*record.Record, *record.Salvaged, error) {
	if !salvage {
		r, err := record.Parse(body)
		return r, nil, err
	}
	r, sv, err := record.Salvage(body, nil)
	if err != nil || !sv.Broken() {
		return r, nil, err
	}
	return r, &sv, nil
}

// RepairMarker marks roadmap's comment on the issue that says what the
// store repaired in the record; a second repair updates it.
const RepairMarker = "<!-- roadmap:repaired -->"

// RecoverRecordRepaired is the recovery line (github.Recovery's Kind) of a
// record block repaired after a person's edit broke it.
const RecoverRecordRepaired = "repair_record"

// maxRepairLines bounds the lines the repair comment quotes.
const maxRepairLines = 20

// announce says on issue n what the write that just landed rc repaired. The
// record is already repaired, so a comment that cannot be posted fails
// nothing: the recovery line says so.
func (s *Store) announce(ctx context.Context, n int, rc *RecordComment) {
	sv := *rc.repair
	rc.repair, rc.Dropped = nil, sv.Unread
	reason := fmt.Sprintf("record comment %d: a broken record block repaired: %d lines not read, %d keys kept from the last good read",
		rc.ID, len(sv.Unread), len(sv.Restored))
	if _, err := s.gh.UpsertMarkerComment(ctx, n, RepairMarker, repairComment(rc.ID, sv)); err != nil {
		reason += "; the comment saying so was not posted: " + err.Error()
	}
	s.gh.Recovered(github.Recovery{Kind: RecoverRecordRepaired, Endpoint: fmt.Sprintf("issue %d record", n), Attempt: 1, Reason: reason})
}

// repairComment is the comment that says what the repair of record comment
// id did. The lines quoted are a person's text: they stand in a code block,
// with no '<' or '>', so they render as text and forge no marker.
func repairComment(id int64, sv record.Salvaged) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**roadmap** · repaired this item's record (comment %d): an edit left lines in its record block "+
		"that roadmap could not read, so it wrote the block again from what it could read.\n\n", RepairMarker, id)
	b.WriteString("Not read, and dropped from the block:\n\n~~~text\n")
	for i, u := range sv.Unread {
		if i == maxRepairLines {
			fmt.Fprintf(&b, "… and %d more\n", len(sv.Unread)-i)
			break
		}
		fmt.Fprintf(&b, "line %d: %s\n  → %s\n", u.Err.Line, quoted(u.Text), quoted(u.Err.Msg))
	}
	b.WriteString("~~~\n\n")
	read := make([]string, len(sv.Read))
	for i, k := range sv.Read {
		read[i] = "`" + string(k) + "`"
	}
	fmt.Fprintf(&b, "Kept: every line of the block that still reads (%d keys", len(read))
	if len(read) > 0 {
		b.WriteString(": " + strings.Join(read, ", "))
	}
	b.WriteString(")")
	if len(sv.Restored) > 0 {
		keys := make([]string, len(sv.Restored))
		for i, k := range sv.Restored {
			keys[i] = "`" + string(k) + "`"
		}
		fmt.Fprintf(&b, ", and, from roadmap's last good read of the record, what the block lost: %s", strings.Join(keys, ", "))
	}
	b.WriteString(".\n\nTo change a key, edit the record comment again, one `key: value` line per key between its first and last lines. " +
		"An edit saved in the moment roadmap writes the record (one round trip) can still be overwritten by that write.\n")
	return b.String()
}

// quoted is a person's text as the repair comment quotes it in its code
// block: one line, no '<' or '>'.
func quoted(s string) string {
	return strings.NewReplacer("<", "‹", ">", "›", "\r", " ", "\n", " ").Replace(s)
}
