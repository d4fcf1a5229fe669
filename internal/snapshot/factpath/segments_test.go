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

// Match's early rejection on the first segment agrees with the full
// segment-by-segment match.
func FuzzMatchFastEqualsFull(f *testing.F) {
	for _, s := range [][2]string{{"memory.thp", "memory.thp.enabled"}, {"memory.thp", "memory.thpx"}, {"host.uptime_seconds", "sysctl.vm.swappiness"},
		{"*", "a.b"}, {"sched_*", "sched_x.y"}, {"a", ".a.b"}, {"a", "a]b"}, {"irqs[*].total", "irqs[eth0].total"}, {"a", "\xffa"}, {"ab", "a]b.c"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if got, want := Match(pattern, path), matchPrefix(Segments(pattern), Segments(path)); got != want {
			t.Fatalf("Match(%q, %q) = %v, want %v", pattern, path, got, want)
		}
	})
}
