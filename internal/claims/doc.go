// Package claims lets several items' implement Jobs run at once on disjoint
// parts of the repository. Before its first group a Job claims the units its
// plan will change (a Go package, or any other file), one git ref per unit
// under refs/roadmap/claims/, created by a push the remote arbitrates: of two
// Jobs creating the same ref exactly one succeeds, and no GitHub API request
// is spent. A unit another item holds while its Job lives makes the Job wait
// for that item (Overlap); a holder whose Job is gone is taken over. An item
// gives its claims back at ready and at a stop (Release), and the items that
// wait for it are dispatched again (Wake). docs/claims.md says why a ref and
// what is not covered.
package claims
