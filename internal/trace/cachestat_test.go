package trace

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
	"golang.org/x/sys/unix"
)

// Reading a 256 MiB file whose pages were just evicted must show a hit
// ratio near 0 %, reading it again near 100 %.
func TestCachestatColdThenWarm(t *testing.T) {
	testenv.RequireRoot(t)
	fs, _ := hostfs.New("/")
	if err := Ready(fs, Needs{Tracefs: true}); err != nil {
		testenv.Unavailable(t, "eBPF tracing: %v", err)
	}
	path := filepath.Join(t.TempDir(), "cachestat.dat")
	const size = 256 << 20
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for n := 0; n < size; n += len(buf) {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	measure := func(evict bool) CacheCounts {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if evict {
			// What `echo 1 > /proc/sys/vm/drop_caches` does, for this file
			// only, so other work on the host keeps its cache.
			if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan struct{})
		var rep *CacheReport
		var cerr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			rep, cerr = Cachestat(ctx, fs, CacheOptions{Interval: time.Second, Top: 50, Ready: func(string) { close(ready) }})
		}()
		select {
		case <-ready:
		case <-done:
			t.Fatal(cerr)
		}
		if _, err := io.CopyBuffer(io.Discard, f, make([]byte, 128<<10)); err != nil {
			t.Fatal(err)
		}
		cancel()
		<-done
		if cerr != nil {
			t.Fatal(cerr)
		}
		var st unix.Stat_t
		_ = unix.Stat(path, &st)
		// The reads are charged to this process's cgroup (v2 path from the
		// "0::" line of /proc/self/cgroup).
		if cg := selfCgroup(t); cg != "" {
			found := false
			for _, g := range rep.Cgroups {
				if g.Name == cg {
					found = g.Accesses >= size/4096*9/10
				}
			}
			if !found {
				t.Errorf("cgroup %s not listed with this read's accesses: %+v", cg, rep.Cgroups)
			}
		}
		for _, g := range rep.Files {
			if g.Name == path {
				t.Logf("evict=%v probes=%s file %+v ratio %s, host total %+v ratio %s, pgpgin %d pages", evict, rep.Probes, g.CacheCounts, ratio(g.RatioPct), rep.Total.CacheCounts, ratio(rep.Total.RatioPct), rep.Total.PgpginPages)
				return g.CacheCounts
			}
		}
		t.Fatalf("file %s not among the files in the report: %+v", path, rep.Files)
		return CacheCounts{}
	}
	cold := measure(true)
	warm := measure(false)
	const pages = size / 4096
	for _, c := range []CacheCounts{cold, warm} {
		if c.Accesses < pages*9/10 || c.Accesses > pages*11/10 {
			t.Errorf("%d page accesses, want about %d", c.Accesses, pages)
		}
		if c.RatioPct == nil {
			t.Fatal("no hit ratio")
		}
	}
	if *cold.RatioPct > 5 {
		t.Errorf("cold read hit ratio %.1f%%, want near 0", *cold.RatioPct)
	}
	if *warm.RatioPct < 95 {
		t.Errorf("warm read hit ratio %.1f%%, want near 100", *warm.RatioPct)
	}
}

func selfCgroup(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return p
		}
	}
	return ""
}
