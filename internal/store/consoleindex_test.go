package store

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// fillPairs saves runs of two probes on three hosts: equal start times
// (ties broken by id bytewise, where "B…" sorts before "a…"), a pair with
// fewer runs than the limits below, and ids shared by no other pair.
func fillPairs(t *testing.T, s *Store) []ProbeHost {
	t.Helper()
	t0 := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	var pairs []ProbeHost
	for h, host := range []string{"h1", "h2", "h3"} {
		for _, probe := range []string{"cpu", "mem"} {
			n := 7
			if h == 2 && probe == "mem" {
				n = 2
			}
			for i := range n {
				id := fmt.Sprintf("%s%s-%s-%02d", []string{"a", "B", "_"}[i%3], host, probe, i)
				r := newRun(id, "l", probe, "snap-"+host, t0.Add(time.Duration(i/2)*time.Minute))
				r.Host = host
				r.Samples[0].Value += float64(i)
				snap := newSnap("snap-" + host)
				snap.Host.Hostname = host
				if err := s.SaveRun(ctx, r, snap); err != nil {
					t.Fatal(err)
				}
			}
			pairs = append(pairs, ProbeHost{Probe: probe, Host: host})
		}
	}
	// Out of order, one pair twice, one pair without runs.
	return append([]ProbeHost{pairs[3], {Probe: "cpu", Host: "nowhere"}}, append(pairs, pairs[0])...)
}

// PairRuns returns for every pair exactly what RunsBatch returns for it
// alone (same runs, order, documents and samples) but the monitor series,
// which it does not read (schema 8), on both backends, with
// a limit below and above a pair's run count.
func TestPairRunsSameAsRunsBatch(t *testing.T) {
	check := func(t *testing.T, s *Store) {
		pairs := fillPairs(t, s)
		for _, limit := range []int{1, 3, 31} {
			got, err := s.PairRuns(ctx, pairs, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(pairs) {
				t.Fatalf("%d results for %d pairs", len(got), len(pairs))
			}
			for i, p := range pairs {
				want, err := s.RunsBatch(ctx, Filter{Probe: p.Probe, Host: p.Host, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 && len(got[i]) == 0 {
					continue
				}
				// Whole runs but for their monitor series, which the
				// index never reads (schema 8: stored apart, not read).
				for j, r := range want {
					if len(r.Monitor) == 0 {
						t.Fatalf("run %s has no monitor series: the check proves nothing", r.ID)
					}
					lean := *r
					lean.Monitor = nil
					want[j] = &lean
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Errorf("limit %d, %s on %s: PairRuns %v, RunsBatch %v", limit, p.Probe, p.Host, ids(got[i]), ids(want))
				}
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTemp(t)
		check(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		s, _ := openPG(t)
		check(t, s)
	})
}

// More pairs than one query reads are read in several, in order.
func TestPairRunsChunks(t *testing.T) {
	s, _ := openTemp(t)
	pairs := fillPairs(t, s)
	var many []ProbeHost
	for len(many) <= PairRunsMost {
		many = append(many, pairs...)
	}
	got, err := s.PairRuns(ctx, many, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range many {
		want, err := s.RunsBatch(ctx, Filter{Probe: p.Probe, Host: p.Host, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(got[i]), ids(want)) {
			t.Fatalf("pair %d (%s on %s): %v, want %v", i, p.Probe, p.Host, ids(got[i]), ids(want))
		}
	}
}

// LabelHosts is HostsWithLabel's hosts in byte order ("Zed" before "h0"
// whatever the database's collation), on both backends.
func TestLabelHostsAsHostsWithLabel(t *testing.T) {
	check := func(t *testing.T, s *Store) {
		writeAll(t, s)
		r := newRun("zed1", "", "cpu", "", time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
		r.Host, r.Label = "Zed", "a"
		if err := s.SaveRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
		for _, label := range []string{"a", "b", "lab1", "", "nosuch"} {
			m, err := s.HostsWithLabel(ctx, label)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Sorted(maps.Keys(m))
			got, err := s.LabelHosts(ctx, label)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || label == "a" && (len(got) < 2 || got[0] != "Zed") {
				t.Errorf("%s: label %q: LabelHosts %v, want %v", s.Path, label, got, want)
			}
		}
	}
	lite, _ := openTemp(t)
	check(t, lite)
	testenv.Short(t)
	pg, _ := openPG(t)
	check(t, pg)
}
