// Package tune turns failing audit findings into a change set and applies it
// as a transaction: every knob's old value is journaled (and fsynced) before
// it is written, a failed write rolls back what was applied, `verify` reports
// drift from the applied values, and `revert` restores the exact previous
// values from the journal — also after perflab was killed mid-apply.
//
// There is one source of truth: a plan is the Changes of the audit's failing
// findings for a workload, so audit and tune never disagree. Boot-time knobs
// (kernel command line) and commands (stop a service) are printed as
// instructions, never applied.
//
// All reads and writes go through hostfs, so the whole cycle runs against a
// copied fixture tree in tests ("fake root") exactly as on a live host. The
// journal lives under the root too: <root>/var/lib/perflab/tune/.
package tune
