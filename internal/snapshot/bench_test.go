package snapshot

import (
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
	"golang.org/x/sys/unix"
)

// BenchmarkCollectLive is a whole live snapshot, the cost `perflab
// snapshot` and `perflab audit` pay before any rule runs (budget: 50 ms
// median with the audit on the 2-core CI machine).
//
//	go test ./internal/snapshot -run '^$' -bench CollectLive -benchtime=50x -count=5
func BenchmarkCollectLive(b *testing.B) {
	fs, err := hostfs.New("/")
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := Collect(fs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user+system CPU time in ns. Reported next to
// ns/op because on a shared 2-core machine wall time mostly measures the
// other jobs; CPU time is what the snapshot itself costs.
func cpuTime() int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkCollector times each area collector alone on the live host, to
// find the one to make leaner when BenchmarkCollectLive grows.
func BenchmarkCollector(b *testing.B) {
	fs, err := hostfs.New("/")
	if err != nil {
		b.Fatal(err)
	}
	named := []struct {
		name string
		f    func(*collector)
	}{
		{"host", collectHost}, {"cpu", collectCPU}, {"power", collectPower},
		{"memory", collectMemory}, {"kernel", collectKernel}, {"sysctl", collectSysctl},
		{"irq", collectIRQ}, {"net", collectNet}, {"block", collectBlock},
		{"mounts", collectMounts}, {"cgroup", collectCgroup}, {"services", collectServices},
		{"tools", collectTools}, {"load", collectLoad}, {"limits", collectLimits},
		{"process", collectProcess},
	}
	if len(named) != len(collectors) {
		b.Fatalf("BenchmarkCollector lists %d collectors, snapshot.go runs %d", len(named), len(collectors))
	}
	for _, n := range named {
		b.Run(n.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				s := &Snapshot{Sysctl: map[string]string{}, Services: map[string]Service{}, Tools: map[string]string{}, Unavailable: map[string]string{}}
				c := &collector{fs: fs, opt: Options{PID: 1}, s: s}
				c.proc, _ = fs.Proc()
				c.sys, _ = fs.Sys()
				n.f(c)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
