//go:build race

package own

// raceBuild: the test binary is instrumented by the race detector, which
// slows perflab's own load generator several-fold but not wrk.
const raceBuild = true
