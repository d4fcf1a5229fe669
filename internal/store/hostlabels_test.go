package store

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/perflab/perflab/internal/run"

	"github.com/perflab/perflab/internal/testenv"
)

// checkHostLabels: host_labels holds exactly the runs' count per host and
// label (`SELECT host, label, count(*) FROM runs GROUP BY host, label`),
// no row with no runs.
func checkHostLabels(t *testing.T, s *Store) {
	t.Helper()
	got, err := s.HostLabels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT host, label, count(*) FROM runs GROUP BY host, label ORDER BY `+s.d.byteOrder("host")+`, `+s.d.byteOrder("label"))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var want []HostLabel
	for rows.Next() {
		var h HostLabel
		if err := rows.Scan(&h.Host, &h.Label, &h.Runs); err != nil {
			t.Fatal(err)
		}
		want = append(want, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatalf("%s: no runs at all: the check proves nothing", s.Path)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: host_labels\n %v\nwant (from runs)\n %v", s.Path, got, want)
	}
}

// HostsWithLabel answers from host_labels what the runs say, and
// host_labels follows every writer (TestHostMediansFollowEveryWriter
// writes by every path; here labels are spread over hosts).
func TestHostLabelsFollowEveryWriter(t *testing.T) {
	check := func(t *testing.T, s *Store) {
		writeAll(t, s)
		checkHostLabels(t, s)
		hs, err := s.HostsWithLabel(ctx, "lab1")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(hs) != "map[h1:true]" {
			t.Errorf("%s: hosts with label lab1: %v, want h1 only", s.Path, hs)
		}
		// The last run of a host and label deleted: the row goes.
		if err := s.Delete(ctx, "m005"); err != nil {
			t.Fatal(err)
		}
		checkHostLabels(t, s)
		if hs, err := s.HostsWithLabel(ctx, "lab1"); err != nil || len(hs) != 0 {
			t.Errorf("%s: hosts with label lab1 after its only run went: %v %v", s.Path, hs, err)
		}
	}
	lite, _ := openTemp(t)
	check(t, lite)
	testenv.Short(t)
	pg, _ := openPG(t)
	check(t, pg)
}

// NewestRefs is RunRefs of each pair in one query, and RunsByIDs loads
// what RunsBatch loads, on both backends (the console's comparison reads
// its sides and noise history with them).
func TestNewestRefsAndRunsByIDs(t *testing.T) {
	check := func(t *testing.T, s *Store) {
		writeAll(t, s)
		pairs := [][2]string{{"memory.latency", "h1"}, {"cpu", "h2"}, {"cpu", "nosuch"}, {"cpu", "h0"}, {"memory.latency", "h3"}}
		got, err := s.NewestRefs(ctx, pairs, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(got[0]) != 4 || len(got[2]) != 0 {
			t.Fatalf("%s: NewestRefs gives %d and %d runs, want 4 and none", s.Path, len(got[0]), len(got[2]))
		}
		probes := []string{"memory.latency", "nosuch", "cpu"}
		byProbe, err := s.LabelProbeRefs(ctx, "a", probes, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range probes {
			want, _, err := s.RunRefs(ctx, Page{Filter: Filter{Label: "a", Probe: p, Limit: 3}})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(byProbe[i]) != fmt.Sprint(want) || p != "nosuch" && len(want) != 3 {
				t.Errorf("%s label a, probe %s: LabelProbeRefs %v, RunRefs %v", s.Path, p, byProbe[i], want)
			}
		}
		for i, p := range pairs {
			want, _, err := s.RunRefs(ctx, Page{Filter: Filter{Probe: p[0], Host: p[1], Limit: 4}})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got[i]) != fmt.Sprint(want) {
				t.Errorf("%s %v: NewestRefs %v, RunRefs %v", s.Path, p, got[i], want)
			}
			batch, err := s.RunsBatch(ctx, Filter{Probe: p[0], Host: p[1], Limit: 4})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range want {
				ids = append(ids, r.ID)
			}
			byID, err := s.RunsByIDs(ctx, append(ids, "gone"))
			if err != nil {
				t.Fatal(err)
			}
			if len(batch) != len(want) || len(byID) != len(batch) || len(batch) > 0 && runsJSON(t, byID) != runsJSON(t, batch) {
				t.Errorf("%s %v: RunsByIDs loads other runs than RunsBatch", s.Path, p)
			}
			// What a noise history reads of them, and only that.
			hist, err := s.HistoryRunsByIDs(ctx, ids)
			if err != nil || len(hist) != len(batch) {
				t.Fatalf("%s %v: HistoryRunsByIDs: %d runs, %v", s.Path, p, len(hist), err)
			}
			for j, h := range hist {
				r := batch[j]
				lean := run.Run{Schema: r.Schema, ID: r.ID, Suite: r.Suite, Probe: r.Probe, Params: r.Params, CPUs: r.CPUs, Host: r.Host}
				hs := *h
				hs.Samples = nil
				if runsJSON(t, []*run.Run{&hs}) != runsJSON(t, []*run.Run{&lean}) || h.ParamKey() != r.ParamKey() {
					t.Errorf("%s %s: history run %+v, want %+v", s.Path, r.ID, hs, lean)
				}
				for _, m := range r.Metrics { // each metric's values in iteration order
					if fmt.Sprint(h.Values(m.Name)) != fmt.Sprint(r.Values(m.Name)) {
						t.Errorf("%s %s %s: history values %v, want %v", s.Path, r.ID, m.Name, h.Values(m.Name), r.Values(m.Name))
					}
				}
			}
		}
	}
	lite, _ := openTemp(t)
	check(t, lite)
	testenv.Short(t)
	pg, _ := openPG(t)
	check(t, pg)
}

func runsJSON(t *testing.T, runs []*run.Run) string {
	t.Helper()
	b, err := json.Marshal(runs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
