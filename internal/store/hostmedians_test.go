package store

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
)

// medianLists is a store's medians per host_medians key, each list's
// values as their bit patterns, sorted: from host_medians (fromHost) or
// recomputed from run_metrics.
func medianLists(t *testing.T, s *Store, fromHost bool) map[string][]uint64 {
	t.Helper()
	out := map[string][]uint64{}
	v, err := s.FleetView(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	add := func(k string, vs ...float64) {
		for _, x := range vs {
			out[k] = append(out[k], math.Float64bits(x))
		}
	}
	if fromHost {
		err = v.FleetHostMedians(ctx, func(h *HostMedians) error {
			k := strings.Join([]string{h.Host, h.Probe, h.Metric, h.Params, h.Unit, string(h.Better)}, "\x00")
			if _, dup := out[k]; dup {
				return fmt.Errorf("key %q twice", k)
			}
			if len(h.Medians) == 0 {
				return fmt.Errorf("key %q: an empty list is kept", k)
			}
			add(k, h.Medians...)
			return nil
		})
	} else {
		err = v.FleetMedians(ctx, FleetFilter{}, func(m MetricRow) error {
			add(strings.Join([]string{m.Host, m.Probe, m.Metric, m.Params, m.Unit, string(m.Better)}, "\x00"), m.Median)
			return nil
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range out {
		slices.Sort(l)
	}
	return out
}

// checkHostMedians: host_medians holds exactly the run_metrics medians,
// bit for bit, per host and metric.
func checkHostMedians(t *testing.T, s *Store) {
	t.Helper()
	got, want := medianLists(t, s, true), medianLists(t, s, false)
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("%s: host_medians %q holds %d values, run_metrics %d (or other values)", s.Path, k, len(got[k]), len(w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: host_medians %q has no run_metrics rows", s.Path, k)
		}
	}
	if len(want) == 0 {
		t.Errorf("%s: no medians at all: the check proves nothing", s.Path)
	}
}

// awkward are medians whose bytes hold NUL, invalid UTF-8 and signed
// zero, which a text round trip would mangle.
var awkward = []float64{math.Copysign(0, -1), math.SmallestNonzeroFloat64, -math.MaxFloat64, 1.0000000000000002, 0x1p-1022, 256.00390625}

// writeAll stores runs on s by every writer path: SaveRun, Import, and
// (the rest) CopyRuns; then deletes some.
func writeAll(t *testing.T, s *Store) {
	t.Helper()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var runs []*run.Run
	for i := range 60 {
		r := newRun(fmt.Sprintf("m%03d", i), "", []string{"cpu", "memory.latency"}[i%2], "", t0.Add(time.Duration(i)*time.Second))
		r.Host = fmt.Sprintf("h%d", i%4)
		if i == 59 {
			r.Host = "solo"
		}
		r.Label = []string{"", "a", "b"}[i%3] // host_labels: several labels a host, one shared by hosts
		if i == 5 {
			r.Label = "lab1" // the only run of its host and label
		}
		r.Samples[0].Value = awkward[i%len(awkward)]
		r.Samples[2].Value = awkward[i%len(awkward)] // zeta's median is exactly it
		r.Samples[1].Value += float64(i) / 3
		if i%9 == 0 {
			r.Stop = run.StopInterrupted // no medians
		}
		runs = append(runs, r)
	}
	for _, r := range runs[:10] {
		if err := s.SaveRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Import(ctx, &run.Export{Runs: runs[10:20], Snapshots: map[string]*snapshot.Snapshot{}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyRuns(ctx, runs[20:], nil); err != nil {
		t.Fatal(err)
	}
	// Deleting: a run whose median another run of its host shares (one
	// occurrence goes), the only run of a key (the row goes), a run
	// without medians.
	for _, id := range []string{"m024", "m059", "m009"} {
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
}

// Every writer keeps host_medians equal to run_metrics, on both backends.
func TestHostMediansFollowEveryWriter(t *testing.T) {
	lite, _ := openTemp(t)
	writeAll(t, lite)
	checkHostMedians(t, lite)
	checkHostLabels(t, lite)
	testenv.Short(t)
	pg, _ := openPG(t)
	writeAll(t, pg)
	checkHostMedians(t, pg)
	checkHostLabels(t, pg)
	if a, b := medianLists(t, lite, true), medianLists(t, pg, true); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("SQLite and PostgreSQL keep other host medians for the same writes")
	}
}

// A store written before schema 6 gets host_medians from run_metrics when
// it is opened for writing, and a store opened read-only at schema 5 says
// it has none (the report then reads run_metrics).
func TestHostMediansMigrate(t *testing.T) {
	check := func(t *testing.T, path string) {
		old := SchemaVersion
		SchemaVersion = 5
		s, err := Open(path)
		if err != nil {
			SchemaVersion = old
			t.Fatal(err)
		}
		writeOld(t, s)
		s.Close()
		SchemaVersion = old
		ro, err := OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ro.FleetView(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := v.HasHostMedians(ctx); ok || err != nil {
			t.Errorf("schema 5 read-only: HasHostMedians = %v, %v; want false", ok, err)
		}
		v.Close()
		// The label filter on a store without host_labels reads the runs.
		if hs, err := ro.HostsWithLabel(ctx, "old"); err != nil || fmt.Sprint(hs) != "map[h0:true h1:true h2:true]" {
			t.Errorf("schema 5 read-only: HostsWithLabel = %v, %v; want h0 h1 h2", hs, err)
		}
		if hs, err := ro.LabelHosts(ctx, "old"); err != nil || fmt.Sprint(hs) != "[h0 h1 h2]" {
			t.Errorf("schema 5 read-only: LabelHosts = %v, %v; want [h0 h1 h2]", hs, err)
		}
		ro.Close()
		s, err = Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkHostMedians(t, s)
		checkHostLabels(t, s) // schema 7's back-fill too
		writeAll(t, s)        // and kept after
		checkHostMedians(t, s)
		checkHostLabels(t, s)
	}
	check(t, filepath.Join(t.TempDir(), "old.db"))
	testenv.Short(t)
	check(t, testenv.Postgres(t))
}

// writeOld stores runs at the schema the store was opened with.
func writeOld(t *testing.T, s *Store) {
	t.Helper()
	t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	for i := range 12 {
		r := newRun(fmt.Sprintf("o%03d", i), "old", "cpu", "", t0.Add(time.Duration(i)*time.Second))
		r.Host = fmt.Sprintf("h%d", i%3)
		r.Samples[0].Value = awkward[i%len(awkward)]
		r.Samples[2].Value = awkward[i%len(awkward)]
		if err := s.SaveRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWithoutMedians(t *testing.T) {
	enc := func(vs ...float64) []byte { return encodeMedians(nil, vs...) }
	for _, tc := range []struct{ stored, gone, want []byte }{
		{enc(1, 2, 1, 3), enc(1), enc(2, 1, 3)},
		{enc(1, 2), enc(2, 1), nil},
		{enc(1, 2), enc(5), enc(1, 2)},
		{enc(0, math.Copysign(0, -1)), enc(math.Copysign(0, -1)), enc(0)},
	} {
		if got := withoutMedians(tc.stored, tc.gone); string(got) != string(tc.want) {
			t.Errorf("withoutMedians(%x, %x) = %x, want %x", tc.stored, tc.gone, got, tc.want)
		}
	}
	if _, err := decodeMedians(nil, make([]byte, 12)); err == nil {
		t.Error("12 bytes decoded without an error")
	}
}

// FuzzHostMediansCodec: any stored bytes decode to a list that encodes
// back to them (or are refused when not whole doubles), and taking values
// out removes exactly one occurrence of each that is there.
func FuzzHostMediansCodec(f *testing.F) {
	f.Add(encodeMedians(nil, awkward...), encodeMedians(nil, awkward[0]))
	f.Add([]byte("0123456789abcdef"), []byte("01234567"))
	f.Add([]byte("short"), []byte{})
	f.Fuzz(func(t *testing.T, stored, gone []byte) {
		vs, err := decodeMedians(nil, stored)
		if len(stored)%8 != 0 {
			if err == nil {
				t.Fatalf("%d bytes decoded without an error", len(stored))
			}
			return
		}
		if err != nil || string(encodeMedians(nil, vs...)) != string(stored) {
			t.Fatalf("%x: decoded %v (%v) does not encode back", stored, vs, err)
		}
		left := withoutMedians(stored, gone)
		if len(left)%8 != 0 || len(left) > len(stored) {
			t.Fatalf("withoutMedians(%x, %x) = %x", stored, gone, left)
		}
		count := func(b []byte) map[string]int {
			m := map[string]int{}
			for i := 0; i+8 <= len(b); i += 8 {
				m[string(b[i:i+8])]++
			}
			return m
		}
		before, after, out := count(stored), count(left), count(gone)
		for v, n := range before {
			want := max(n-out[v], 0)
			if after[v] != want {
				t.Fatalf("value %x: %d left of %d after taking %d out", v, after[v], n, out[v])
			}
		}
	})
}
