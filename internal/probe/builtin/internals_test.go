package builtin

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/testenv"
	"golang.org/x/sys/unix"
)

// sysbench counts the primes c with 3 <= c < max_prime; π(100) = 25 and
// π(10000) = 1229, minus the prime 2.
func TestPrimeEventMatchesSysbenchCount(t *testing.T) {
	for _, c := range []struct{ max, want uint64 }{{3, 0}, {4, 1}, {100, 24}, {10000, 1228}} {
		if got := primeEvent(c.max); got != c.want {
			t.Errorf("primeEvent(%d) = %d, want %d", c.max, got, c.want)
		}
	}
}

// Every size class's chain must be one cycle through all of its nodes and
// never leave its working set, or the latency of a smaller set than claimed
// would be measured.
func TestBuildChainsSingleCycle(t *testing.T) {
	sizes := []int64{4 << 10, 8 << 10, 16 << 10, 64 << 10}
	b := make([]uint32, sizes[len(sizes)-1]/4)
	buildChains(b, sizes, rand.New(rand.NewPCG(3, 4)))
	for k, s := range sizes {
		n := int(s / nodeBytes)
		seen := make([]bool, n)
		p := uint32(k)
		for i := 0; i < n; i++ {
			if int(p)%slotsPerNode != k {
				t.Fatalf("class %d: pointer %d leaves slot %d", k, p, k)
			}
			node := int(p) / slotsPerNode
			if node >= n {
				t.Fatalf("class %d: node %d outside the %d-node working set", k, node, n)
			}
			if seen[node] {
				t.Fatalf("class %d: node %d visited twice after %d steps (cycle shorter than %d)", k, node, i, n)
			}
			seen[node] = true
			p = b[p]
		}
		if p != uint32(k) {
			t.Errorf("class %d: after %d steps the chain is not back at node 0", k, n)
		}
		if got := chase(b, uint32(k), n); got != uint32(k) {
			t.Errorf("class %d: chase of one lap ends at %d", k, got)
		}
	}
}

func TestReadWriteWords(t *testing.T) {
	w := make([]uint64, 1003) // not a multiple of 8: the tail loop counts
	var want uint64
	for i := range w {
		w[i] = uint64(i * 7)
		want += w[i]
	}
	if got := readWords(w); got != want {
		t.Errorf("readWords = %d, want %d", got, want)
	}
	v := writeWords(w)
	for i, x := range w {
		if x != v {
			t.Fatalf("writeWords left w[%d] = %d, want %d", i, x, v)
		}
	}
}

func TestSliceOfDisjointAligned(t *testing.T) {
	b := make([]byte, 10_000)
	for _, threads := range []int{1, 2, 3, 7} {
		end := 0
		for i := 0; i < threads; i++ {
			s := sliceOf(b, int64(len(b)), threads, i)
			off := cap(b) - cap(s)
			if off != end || off%64 != 0 || len(s)%64 != 0 || len(s) == 0 {
				t.Errorf("threads=%d worker %d: slice at %d len %d (previous ended at %d)", threads, i, off, len(s), end)
			}
			end = off + len(s)
		}
		if end > len(b) {
			t.Errorf("threads=%d: slices run past the buffer", threads)
		}
	}
}

func TestPercentileNearestRank(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ q, want float64 }{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0.11, 2}, {1, 10}} {
		if got := percentile(v, c.q); got != c.want {
			t.Errorf("percentile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing")
	}
}

func TestPlacePairs(t *testing.T) {
	ping, pong := placePairs([]int{4, 5}, 2, "spread")
	if ping[0] != 4 || pong[0] != 5 || ping[1] != 4 || pong[1] != 5 {
		t.Errorf("spread: %v %v", ping, pong)
	}
	ping, pong = placePairs([]int{4, 5}, 2, "same")
	if ping[0] != pong[0] || ping[1] != pong[1] || ping[0] == ping[1] {
		t.Errorf("same: %v %v", ping, pong)
	}
	ping, pong = placePairs([]int{4, 5}, 1, "os")
	if ping[0] != -1 || pong[0] != -1 {
		t.Errorf("os: %v %v", ping, pong)
	}
}

func TestParseAnonHugePages(t *testing.T) {
	data := "00400000-7fff0000 ---p 00000000 00:00 0   [rollup]\nRss:  1000 kB\nAnonHugePages:    4096 kB\nShmemHugePages: 0 kB\n"
	got, err := parseAnonHugePages([]byte(data))
	if err != nil || got != 4096<<10 {
		t.Errorf("got %d, %v; want %d", got, err, 4096<<10)
	}
	for _, bad := range []string{"Rss: 1 kB\n", "AnonHugePages: x kB\n", "AnonHugePages: 4 MB\n", "AnonHugePages: -4 kB\n"} {
		if _, err := parseAnonHugePages([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseAnonHugePages(f *testing.F) {
	f.Add([]byte("AnonHugePages:    2048 kB\n"))
	f.Add([]byte("Rss: 1 kB\nAnonHugePages: 0 kB"))
	f.Add([]byte("AnonHugePages: 99999999999999999999 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseAnonHugePages(data)
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Fatalf("accepted %q as %d bytes", data, n)
		}
	})
}

// When O_DIRECT is refused with EINVAL (tmpfs before Linux 6.6), direct=auto
// falls back to buffered I/O with a note, and direct=true fails.
func TestDiskODirectFallback(t *testing.T) {
	orig := diskOpen
	t.Cleanup(func() { diskOpen = orig })
	diskOpen = func(path string, flags int, mode uint32) (int, error) {
		if flags&unix.O_DIRECT != 0 {
			return -1, unix.EINVAL
		}
		return orig(path, flags, mode)
	}
	d := &Disk{}
	env := newEnv(t, d, tiny["disk"])
	before := openFDs(t)
	if err := d.Setup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if d.direct {
		t.Error("still using O_DIRECT after EINVAL")
	}
	if !hasNote(env, "O_DIRECT is not supported") {
		t.Errorf("no fallback note in %v", env.Notes)
	}
	vals, err := d.Iterate(context.Background(), env)
	if err != nil || vals["seq_read"] <= 0 {
		t.Errorf("buffered Iterate: %v %v", vals, err)
	}
	if err := d.Teardown(env); err != nil {
		t.Fatal(err)
	}
	assertNoLeaks(t, before, env.Dir)

	env = newEnv(t, d, probe.Params{"size": "2MiB", "block": "256KiB", "direct": "true"})
	if err := d.Setup(context.Background(), env); err == nil || !strings.Contains(err.Error(), "O_DIRECT") {
		t.Errorf("direct=true on a filesystem without O_DIRECT: %v", err)
	}
	if err := d.Teardown(env); err != nil {
		t.Fatal(err)
	}
	assertNoLeaks(t, before, env.Dir)
}

func TestDiskNotesTmpfs(t *testing.T) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || int64(st.Type) != tmpfsMagic {
		testenv.Unavailable(t, "no tmpfs at /dev/shm")
	}
	dir, err := os.MkdirTemp("/dev/shm", "perflab-test-")
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &Disk{}
	env := &probe.Env{Params: d.Defaults(true).Merge(tiny["disk"]), Dir: dir, Log: io.Discard}
	if err := d.Setup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	defer d.Teardown(env)
	if !hasNote(env, "tmpfs") {
		t.Errorf("no tmpfs note in %v", env.Notes)
	}
}

// tests= runs only the named steps and reports only their metrics.
func TestDiskTestsSubset(t *testing.T) {
	d := &Disk{}
	env := newEnv(t, d, tiny["disk"].Merge(probe.Params{"tests": "fsync,seq_read"}))
	ms, err := d.Metrics(env.Params)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "seq_read fsync fsync.p99" {
		t.Fatalf("metrics %q", got)
	}
	if err := d.Setup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	defer d.Teardown(env)
	vals, err := d.Iterate(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 3 || vals["seq_read"] <= 0 || vals["fsync"] <= 0 || vals["fsync.p99"] <= 0 {
		t.Errorf("values %v, want exactly seq_read, fsync and fsync.p99", vals)
	}
	if _, err := d.Metrics(probe.Params{"tests": "seq_read,trim"}); err == nil || !strings.Contains(err.Error(), `"trim" is not one of`) {
		t.Errorf("unknown step: %v", err)
	}
}

func TestDiskNeedsDir(t *testing.T) {
	d := &Disk{}
	env := &probe.Env{Params: d.Defaults(true), Log: io.Discard}
	if err := d.Setup(context.Background(), env); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("Setup without a directory: %v", err)
	}
	_ = d.Teardown(env)
}

func TestPageFaultNotes(t *testing.T) {
	orig := readTHPMode
	t.Cleanup(func() { readTHPMode = orig })
	readTHPMode = func() string { return "never" }
	f := &PageFault{}
	env := newEnv(t, f, tiny["memory.pagefault"])
	if err := f.Setup(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Iterate(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	_ = f.Teardown(env)
	if !hasNote(env, "'never'") || !hasNote(env, "equal by design") {
		t.Errorf("no THP-never note in %v", env.Notes)
	}
	if !hasNote(env, "backed by huge pages") {
		t.Errorf("no record of whether THP applied in %v", env.Notes)
	}
}

func hasNote(env *probe.Env, sub string) bool {
	for _, n := range env.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
