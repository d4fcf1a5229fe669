package knowledge

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/snapshot/factpath"
)

// Every pattern of the knowledge base names a real fact; one that names a
// sysctl must name one that a fixture tree has (a misspelt sysctl is as
// dead as a misspelt field).
func TestKnowledgePaths(t *testing.T) {
	sysctls := fixtureSysctls(t)
	n := 0
	for _, e := range Base {
		for _, p := range e.Paths {
			n++
			if err := factpath.Check(p); err != nil {
				t.Errorf("knowledge %s: %q: %v", e.ID, p, err)
				continue
			}
			if strings.HasPrefix(p, "sysctl.") {
				hit := false
				for k := range sysctls {
					if factpath.Match(p, k) {
						hit = true
						break
					}
				}
				if !hit {
					t.Errorf("knowledge %s: %q names no sysctl of any fixture tree", e.ID, p)
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d knowledge patterns", n)
	}
}

// fixtureSysctls is the set of "sysctl.NAME" paths of every fixture tree.
func fixtureSysctls(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, s := range fixturesnap.All(t) {
		for k := range s.Sysctl {
			out["sysctl."+k] = true
		}
	}
	if len(out) == 0 {
		t.Fatal("no sysctl in any fixture tree")
	}
	return out
}
