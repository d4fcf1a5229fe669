package snapshot

import (
	"os"
	"testing"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// TestEthtoolFeaturesAsSafchain: the sized offload query answers what
// safchain's Features answers, on every interface of this host (lo is
// always there and reports ~60 features), and fails the same way for an
// interface that does not exist.
func TestEthtoolFeaturesAsSafchain(t *testing.T) {
	ref, err := ethtool.NewEthtool()
	if err != nil {
		t.Fatalf("ethtool socket: %v", err)
	}
	defer ref.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_IP)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	defer unix.Close(fd)
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	compared := 0
	for _, name := range names {
		want, werr := ref.Features(name)
		got, gerr := ethtoolFeatures(fd, name)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: safchain error %v, ours %v", name, werr, gerr)
		}
		if werr != nil {
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d features, safchain %d", name, len(got), len(want))
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %v (present %v), safchain %v", name, k, g, ok, v)
			}
		}
		compared++
	}
	if compared == 0 {
		t.Fatalf("no interface answered ethtool -k among %v", names)
	}
	if _, err := ethtoolFeatures(fd, "perflab-none0"); err == nil {
		t.Error("an interface that does not exist answered")
	}
	if _, err := ethtoolFeatures(fd, "a-name-longer-than-ifnamsiz"); err == nil {
		t.Error("an over-long name answered")
	}
}

// BenchmarkEthtoolFeatures: one `ethtool -k lo`, safchain's and the sized
// query (CPU and allocation per call).
func BenchmarkEthtoolFeatures(b *testing.B) {
	b.Run("safchain", func(b *testing.B) {
		e, err := ethtool.NewEthtool()
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Features("lo"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sized", func(b *testing.B) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_IP)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Close(fd)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ethtoolFeatures(fd, "lo"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
