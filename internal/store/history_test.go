package store

import (
	"sort"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// History loads each (probe, host) once: a probe measured on two hosts
// gets both hosts' history (check's own history() keyed on the probe
// alone and lost the second host), and repeated runs load nothing twice.
func TestHistoryOncePerProbeAndHost(t *testing.T) {
	s, _ := openTemp(t)
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var stored []string
	for i, h := range []string{"h1", "h2", "h1", "h3"} {
		r := newRun("r"+string(rune('a'+i)), "", "cpu", "", t0.Add(time.Duration(i)*time.Minute))
		r.Host = h
		if h == "h3" {
			r.Probe = "memory"
		}
		if err := s.SaveRun(ctx, r, nil); err != nil {
			t.Fatal(err)
		}
		if h != "h3" {
			stored = append(stored, r.ID)
		}
	}
	cur := []*run.Run{{Probe: "cpu", Host: "h1"}, {Probe: "cpu", Host: "h2"}, {Probe: "cpu", Host: "h1"}}
	var got []string
	for _, r := range s.History(ctx, cur) {
		got = append(got, r.ID)
	}
	sort.Strings(got)
	sort.Strings(stored)
	if len(got) != len(stored) {
		t.Fatalf("history %v, want each of %v once", got, stored)
	}
	for i := range got {
		if got[i] != stored[i] {
			t.Fatalf("history %v, want %v", got, stored)
		}
	}
	var nilStore *Store
	if h := nilStore.History(ctx, cur); h != nil {
		t.Fatalf("nil store history %v", h)
	}
}
