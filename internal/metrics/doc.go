// Package metrics computes roadmap's pipeline outcomes across items, by item
// and by outcome rather than by workflow run: how many items stand in each
// state, how many that ended were ready, what a ready item cost (killed and
// stopped items' spend included), what stopped them and how often a Job had
// to be continued. It is a pure function of the items (internal/items, read
// from their records) and a window, so every figure can be checked by hand;
// docs/metrics.md defines each one.
package metrics
