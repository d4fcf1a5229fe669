// Package testenv lets tests that need a real tool, root or a kernel feature
// say so. Outside CI a missing requirement skips the test; with CI=true it
// fails it, because CI installs everything and a skip there hides a gap.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips the test outside CI and fails it in CI.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("required in CI but unavailable: "+format, args...)
	}
	t.Skipf(format, args...)
}

// RequireTool returns the path of a tool on PATH, or skips/fails.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(t, "%s not installed (scripts/test installs it)", name)
	}
	return p
}

// RequireRoot needs uid 0.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "needs root")
	}
}

// Short skips slow integration tests under -short (never in CI).
func Short(t testing.TB) {
	t.Helper()
	if testing.Short() && !InCI() {
		t.Skip("slow integration test; skipped with -short")
	}
}
