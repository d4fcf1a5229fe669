// Package compare joins benchmark runs into sides, compares every metric
// the sides share with the statistics of internal/stats, and explains the
// differences it finds: it diffs the host snapshots and monitor series of
// the sides and ranks each difference by whether the metrics it is known to
// move (internal/knowledge) actually moved.
//
// Everything here is pure: callers load runs and snapshots (from the store,
// an export file or Go benchmark output, see ReadGoBench) and pass them in,
// so comparisons are reproducible from files and testable without a host.
//
// The first side is the baseline; every further side is compared with it.
// The verdict rules and the JSON schema of a Comparison are documented in
// docs/compare.md, the statistics in docs/statistics.md.
package compare
