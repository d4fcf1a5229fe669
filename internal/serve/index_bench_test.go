package serve

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkDriftPerPair is the host index's cost per probe×host pair
// through the one-pair path (driftOf: two store reads per pair).
func BenchmarkDriftPerPair(b *testing.B) {
	path := filepath.Join(b.TempDir(), "perflab.db")
	genStore(b, path, genSpec{Hosts: 10, RunsPerHost: 50, Steps: 1,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 25})
	st := openRO(b, path)
	s := New(st, Config{Listen: "127.0.0.1:0"})
	ctx := context.Background()
	phs, err := st.ProbeHosts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for _, ph := range phs {
			if _, err := s.driftOf(ctx, ph); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "us/pair")
}
