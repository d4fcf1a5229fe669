package store

import (
	"fmt"
	"testing"

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
