package builtin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
)

func TestLastLevelCacheFixtures(t *testing.T) {
	for _, tc := range []struct {
		root string
		want int64
	}{
		// One L3 shared by both CPUs: counted once, not once per CPU.
		{"kvm", 32 << 20},
		// Two L3 instances (CPUs 0-3 and 4-7): both count.
		{"kunpeng", 2 * 32 << 20},
		{"metal", 2 * 25344 << 10},
	} {
		fs, err := hostfs.New(filepath.Join("..", "..", "..", "testdata", "roots", tc.root))
		if err != nil {
			t.Fatal(err)
		}
		got, err := lastLevelCache(fs)
		if err != nil {
			t.Fatalf("%s: %v", tc.root, err)
		}
		if got != tc.want {
			t.Errorf("%s: LLC %d, want %d", tc.root, got, tc.want)
		}
	}
}

// Two sockets, each with its own L3: STREAM's "available cache" is the sum.
func TestLastLevelCacheTwoSockets(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for cpu, shared := range []string{"0-1", "0-1", "2-3", "2-3"} {
		for idx, c := range []struct{ level, typ, size, shared string }{
			{"1", "Instruction", "32K", ""},
			{"2", "Unified", "1024K", ""},
			{"3", "Unified", "20M", shared},
		} {
			d := filepath.Join(root, "sys/devices/system/cpu", "cpu"+itoa(cpu), "cache", "index"+itoa(idx))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for f, v := range map[string]string{"level": c.level, "type": c.typ, "size": c.size, "shared_cpu_list": c.shared} {
				if v == "" {
					continue
				}
				if err := os.WriteFile(filepath.Join(d, f), []byte(v+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lastLevelCache(fs)
	if err != nil {
		t.Fatal(err)
	}
	if got != 40<<20 {
		t.Errorf("LLC %d, want %d (two 20 MiB L3s)", got, 40<<20)
	}
	if a := streamArrayBytes(got); a != 160<<20 {
		t.Errorf("array %d, want 4×40 MiB", a)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestLastLevelCacheMissing(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sys"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := hostfs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lastLevelCache(fs); err == nil {
		t.Error("no caches: want an error")
	}
	// Unknown cache: STREAM's default array.
	if a := streamArrayBytes(0); a != (streamMinArray+4095)&^4095 {
		t.Errorf("default array %d", a)
	}
}

func TestParseCacheSize(t *testing.T) {
	for in, want := range map[string]int64{"32K": 32 << 10, "32768K": 32 << 20, "2M": 2 << 20, "1G": 1 << 30, "4096": 4096} {
		if got, err := parseCacheSize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "K", "-1K", "12Q", "99999999999999999999G"} {
		if _, err := parseCacheSize(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The kernels compute what stream.c's checkSTREAMresults expects after a
// number of passes, so a kernel writing the wrong array fails here.
func TestStreamKernelsValidate(t *testing.T) {
	const n = 1003 // not a multiple of the unrolling
	a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
	for j := range a {
		a[j], b[j], c[j] = 1, 2, 0
	}
	aj, bj, cj := 1.0, 2.0, 0.0
	for pass := 0; pass < 3; pass++ {
		for _, k := range streamKernels {
			// Split as two threads would.
			streamKernel(k, a[:n/2], b[:n/2], c[:n/2])
			streamKernel(k, a[n/2:], b[n/2:], c[n/2:])
		}
		cj = aj
		bj = streamScalar * cj
		cj = aj + bj
		aj = bj + streamScalar*cj
	}
	for j := 0; j < n; j++ {
		if a[j] != aj || b[j] != bj || c[j] != cj {
			t.Fatalf("element %d: a,b,c = %v,%v,%v; want %v,%v,%v", j, a[j], b[j], c[j], aj, bj, cj)
		}
	}
	if streamBytes("copy", 10) != 160 || streamBytes("scale", 10) != 160 || streamBytes("add", 10) != 240 || streamBytes("triad", 10) != 240 {
		t.Error("byte counts differ from STREAM's convention (2 arrays for copy/scale, 3 for add/triad)")
	}
}

func TestStreamParams(t *testing.T) {
	s := &Stream{}
	for _, bad := range []probe.Params{
		{"passes": "1"}, {"kernels": "copy,fma"}, {"array_size": "100"}, {"threads": "0"}, {"nosuch": "1"},
	} {
		if _, err := s.Metrics(s.Defaults(false).Merge(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	ms, err := s.Metrics(probe.Params{"kernels": "triad,copy", "threads": "1,2"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	if want := "copy.t1 copy.t2 triad.t1 triad.t2"; join(names) != want {
		t.Errorf("metrics %q, want %q", join(names), want)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// duration bounds an iteration by time: once it has passed no pass starts,
// but two always run (STREAM discards the first). Without it every one of
// passes runs. The quick defaults bound by time (quick's 7 s budget must
// hold several samples on a loaded host).
func TestStreamDurationBoundsPasses(t *testing.T) {
	s := &Stream{}
	if q := s.Defaults(true); q["duration"] == "" || q["duration"] == "0s" {
		t.Errorf("quick defaults %v: no duration bound", q)
	}
	if d := s.Defaults(false)["duration"]; d != "0s" {
		t.Errorf("full defaults: duration %q, want 0s (passes alone, as STREAM)", d)
	}
	if _, err := s.Metrics(s.Defaults(false).Merge(probe.Params{"duration": "-1s"})); err == nil {
		t.Error("duration=-1s accepted")
	}
	for _, c := range []struct {
		duration string
		want     int
	}{{"1ns", 2}, {"0s", 7}} {
		p := probe.Params{"array_size": "1MiB", "threads": "1,2", "passes": "7", "duration": c.duration}
		env := newEnv(t, s, p)
		if err := s.Setup(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Iterate(context.Background(), env); err != nil {
			t.Fatal(err)
		}
		if len(s.ran) != 2 || s.ran[0] != c.want || s.ran[1] != c.want {
			t.Errorf("duration=%s: passes run %v, want %d at each thread count", c.duration, s.ran, c.want)
		}
		if err := s.Teardown(env); err != nil {
			t.Fatal(err)
		}
	}
}
