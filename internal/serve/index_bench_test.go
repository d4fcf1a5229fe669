package serve

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/testenv"
)

// BenchmarkIndexDrift is the host index's cost per probe×host pair (31
// runs read and compared) on a SQLite store of 20 hosts × 2 probes × 50
// runs: "alone" is the one-pair path (driftOf: five queries a pair),
// "batched" the index's (driftsOf: the runs of 64 pairs in one query).
// -cpuprofile splits it between decoding the runs and compare.
func BenchmarkIndexDrift(b *testing.B) {
	path := filepath.Join(b.TempDir(), "perflab.db")
	genStore(b, path, genSpec{Hosts: 20, RunsPerHost: 50, Steps: 1,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 25})
	st := openRO(b, path)
	s := New(st, Config{Listen: "127.0.0.1:0"})
	ctx := context.Background()
	phs, err := st.ProbeHosts(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("alone", func(b *testing.B) {
		for b.Loop() {
			for _, ph := range phs {
				if _, err := s.driftOf(ctx, ph); err != nil {
					b.Fatal(err)
				}
			}
		}
		perPair(b, len(phs))
	})
	b.Run("batched", func(b *testing.B) {
		for b.Loop() {
			for i := 0; i < len(phs); i += store.PairRunsMost {
				if _, _, err := s.driftsOf(ctx, phs[i:min(i+store.PairRunsMost, len(phs))]); err != nil {
					b.Fatal(err)
				}
			}
		}
		perPair(b, len(phs))
	})
}

func perPair(b *testing.B, pairs int) {
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*pairs), "us/pair")
}

// BenchmarkIndexBuild is the whole background build of the index (every
// pair's drift and every host's audit, one worker) on the same store, in
// SQLite and in PostgreSQL (a private server).
func BenchmarkIndexBuild(b *testing.B) {
	spec := genSpec{Hosts: 20, RunsPerHost: 50, Steps: 1,
		Start: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Every: 12 * time.Hour, SnapEvery: 25}
	b.Run("sqlite", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "perflab.db")
		genStore(b, path, spec)
		benchBuild(b, openRO(b, path))
	})
	b.Run("postgres", func(b *testing.B) {
		dsn := testenv.Postgres(b)
		genStore(b, dsn, spec)
		st, err := store.Open(dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		benchBuild(b, st)
	})
}

func benchBuild(b *testing.B, st *store.Store) {
	ctx := context.Background()
	pairs := 0
	for b.Loop() {
		s := New(st, Config{Listen: "127.0.0.1:0"})
		if err := s.readAggregate(ctx); err != nil {
			b.Fatal(err)
		}
		s.ix.mu.Lock()
		hs := s.ix.hosts
		s.ix.mu.Unlock()
		pairs = 0
		for _, h := range hs {
			pairs += len(h.Pairs)
		}
		if err := s.fillHosts(ctx, hs, 1); err != nil {
			b.Fatal(err)
		}
	}
	perPair(b, pairs)
}
