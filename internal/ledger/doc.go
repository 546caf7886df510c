// Package ledger is the day ledger the stage and implement Jobs read before
// they start and report writes after each Job. Spend per day across items is
// kept as comments on one dashboard issue, one comment per Job, each holding one machine line:
//
//	roadmap::ledger {"day":"2026-11-29","issue":12,"job":3,"run_id":9120,"usd":0.12,"tokens_in":4100,"tokens_out":900,"model_calls":7}
//
// Nobody edits another Job's comment, so Jobs writing at once cannot lose
// each other's entries (a single counter in an issue body would: GitHub has
// no compare-and-swap). A Job's comment is found again by its marker line and
// updated in place, so booking the same Job twice (a re-run of report, spend
// recovered later) replaces its entry rather than adding a second one.
// Check sums the entries of a day on read. Only comments by roadmap's
// identity are the ledger: anyone who can comment on the dashboard could
// otherwise spend the day's budget with one line (stopping every item) or
// un-spend it (a later entry for a Job replaces the earlier one).
package ledger
