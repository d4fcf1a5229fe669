package factpath

import (
	"reflect"
	"testing"
)

// Segments' fast path splits exactly as the rune-by-rune one.
func FuzzSegmentsFastEqualsSlow(f *testing.F) {
	for _, s := range []string{"", ".", "net.interfaces[eth0.100].mtu", "a[x]b", "a]b", "a[[x]]y.z", "a[x", "sysctl.net.core.somaxconn",
		"cpu.numa[*].mem_free_kib", "..a..b..", "\xff.a", "é.ü[ß].x", "[a][b]", "a.[b].c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, want := Segments(p), segmentsSlow(p)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Segments(%q) = %q, want %q", p, got, want)
		}
	})
}
