package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/prometheus/procfs/sysfs"
)

// TestNICAttrsAsProcfs: mtu, operstate and speed read through hostfs equal
// procfs's ParseNetClassAttribute of the same files, on every interface of
// every fixture tree and of this host, and an error procfs reports is
// recorded as missing.
func TestNICAttrsAsProcfs(t *testing.T) {
	roots := map[string]string{"live": "/"}
	for _, n := range fixture.Names() {
		roots[n] = fixture.Dir(n)
	}
	compared := 0
	for name, root := range roots {
		fs, err := hostfs.New(root)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(root, "sys/class/net"))
		if err != nil {
			continue // a tree without NICs
		}
		for _, e := range ents {
			var want sysfs.NetClassIface
			wantMiss := map[string]bool{}
			for _, a := range [][2]string{{"mtu", "mtu"}, {"operstate", "operstate"}, {"speed", "speed_mbps"}} {
				if err := sysfs.ParseNetClassAttribute(filepath.Join(root, "sys/class/net", e.Name()), a[0], &want); err != nil {
					wantMiss[a[1]] = true
				}
			}
			c := &collector{fs: fs, s: &Snapshot{Unavailable: map[string]string{}}}
			mtu, speed := nicAttrInt(c, e.Name(), "mtu", "mtu"), nicAttrInt(c, e.Name(), "speed", "speed_mbps")
			oper, _ := nicAttr(c, e.Name(), "operstate", "operstate")
			if !eqIntPtr(mtu, want.MTU) || !eqIntPtr(speed, want.Speed) || oper != want.OperState {
				t.Errorf("%s %s: mtu %v speed %v operstate %q; procfs %v %v %q", name, e.Name(), deref(mtu), deref(speed), oper, deref(want.MTU), deref(want.Speed), want.OperState)
			}
			for _, f := range []string{"mtu", "operstate", "speed_mbps"} {
				_, got := c.s.Unavailable[ElemPath("net.interfaces", e.Name(), f)]
				if got != wantMiss[f] {
					t.Errorf("%s %s: %s missing %v, procfs %v", name, e.Name(), f, got, wantMiss[f])
				}
			}
			compared++
		}
	}
	if compared < 3 {
		t.Fatalf("only %d interfaces compared", compared)
	}
}

func eqIntPtr(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
