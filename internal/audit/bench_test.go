package audit

import (
	"syscall"
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// BenchmarkSnapshotAndAudit is what `perflab audit` costs on this host
// after process start: a live snapshot of / reading the sysctls the audit
// reads (Sysctls) and no tools (NoTools), plus the whole catalogue for the
// general workload; "full" is the same with every sysctl and the tools, as
// `perflab snapshot` collects.
// bench/audit.sh runs it and reports the median; docs/performance.md keeps
// the figure (budget for the whole command: 10 ms median).
func BenchmarkSnapshotAndAudit(b *testing.B) {
	w, err := LookupWorkload("general")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("audit", func(b *testing.B) { benchSnapshotAndAudit(b, w, snapshot.Options{Sysctls: Sysctls(w), NoTools: true}) })
	b.Run("full", func(b *testing.B) { benchSnapshotAndAudit(b, w, snapshot.Options{}) })
}

func benchSnapshotAndAudit(b *testing.B, w *Workload, opt snapshot.Options) {
	fs, err := hostfs.New("/")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op") }()
	for b.Loop() {
		s, err := snapshot.Collect(fs, opt)
		if err != nil {
			b.Fatal(err)
		}
		if fs := Run(s, w); len(fs) == 0 {
			b.Fatal("no findings")
		}
	}
}

// BenchmarkAudit is the rule evaluation alone, on a snapshot taken once.
func BenchmarkAudit(b *testing.B) {
	fs, _ := hostfs.New("/")
	s, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		b.Fatal(err)
	}
	w, _ := LookupWorkload("general")
	for b.Loop() {
		Run(s, w)
	}
}

// cpuTime is the process's user+system CPU time in ns: on a shared machine
// wall time mostly measures the other jobs.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
