// Package e2e holds perflab's end-to-end proofs: tests that change this
// machine for real (THP policy through tune's journal, a CPU-hogging
// neighbour) and check that 'perflab compare' names the real difference
// among its likely causes, and that an A/A comparison is not reported as a
// change. They drive the same harness, monitor, snapshot and compare
// engine as the CLI, so a failure here is a wrong answer a user would get.
//
// The package has no non-test code beyond this comment: everything lives
// in its tests, which need a Linux host (and root for THP) and take tens of
// seconds, so they skip under -short outside CI.
package e2e
