package audit

import (
	"strings"
	"testing"
)

// preemptModel reads what the kernel and the collector write; any text must
// give a model without panicking, and "dynamic(x)" must give x.
func FuzzPreemptModel(f *testing.F) {
	for _, s := range []string{"dynamic(voluntary)", "dynamic", "full", "rt", "dynamic (", "dynamic)(", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, dyn := preemptModel(s)
		if dyn != strings.HasPrefix(strings.TrimSpace(s), "dynamic") {
			t.Fatalf("%q: dynamic=%v", s, dyn)
		}
		if !dyn && m != strings.TrimSpace(s) {
			t.Fatalf("%q: model %q", s, m)
		}
		if dyn && strings.HasSuffix(m, ")") {
			t.Fatalf("%q: closing parenthesis kept in %q", s, m)
		}
	})
}
