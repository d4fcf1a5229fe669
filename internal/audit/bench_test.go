package audit

import (
	"testing"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// BenchmarkSnapshotAndAudit is what `perflab audit` costs on this host: a
// live snapshot of / plus the whole catalogue for the general workload.
// bench/audit.sh runs it and reports the median; docs/performance.md keeps
// the figure (budget: 50 ms median on a 2-core machine).
func BenchmarkSnapshotAndAudit(b *testing.B) {
	fs, err := hostfs.New("/")
	if err != nil {
		b.Fatal(err)
	}
	w, err := LookupWorkload("general")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := snapshot.Collect(fs, snapshot.Options{})
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
