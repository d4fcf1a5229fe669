package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
)

// plantedStore is the small store with node02's newest cpu run made 30%
// slower, so one host has a worse verdict the hosts page must put first.
func plantedStore(t *testing.T) string {
	t.Helper()
	path := smallStore(t)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	runs, err := st.Runs(ctx, store.Filter{Host: "node02", Probe: "cpu", Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("newest cpu run of node02: %v", err)
	}
	r := runs[0]
	slow := *r
	slow.ID, slow.Label = "slow-node02", "planted"
	slow.Started, slow.Ended = r.Started.Add(time.Hour), r.Ended.Add(time.Hour)
	slow.Samples = nil
	for _, x := range r.Samples {
		x.Value *= 0.7
		slow.Samples = append(slow.Samples, x)
	}
	if err := st.SaveRun(ctx, &slow, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

func hostNamesOf(d hostsDoc) []string {
	var out []string
	for _, h := range d.Hosts {
		out = append(out, h.Host)
	}
	return out
}

// The hosts page finds the bad host among the others: worst first by
// default, filters that return exactly the hosts they name, pages that
// cover every match once, and the count of matches.
func TestHostsPagesAndFilters(t *testing.T) {
	st := openRO(t, plantedStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	var all hostsDoc
	getJSON(t, h, "/?format=json&per=500", &all)
	if all.Total != 4 || len(all.Hosts) != 4 || all.Index.Hosts != 4 {
		t.Fatalf("total %d, %d hosts, index %+v; want 4", all.Total, len(all.Hosts), all.Index)
	}
	verdict := map[string]map[string]compare.Verdict{}
	for _, r := range all.Hosts {
		verdict[r.Host] = map[string]compare.Verdict{}
		for _, d := range r.Drift {
			verdict[r.Host][d.Probe] = d.Verdict
		}
	}
	if all.Hosts[0].Host != "node02" || verdict["node02"]["cpu"] != compare.Worse {
		t.Fatalf("worst first: %v, node02 cpu %s; want node02 (planted 30%% slower) first", hostNamesOf(all), verdict["node02"]["cpu"])
	}
	// Pages of 1 cover the same hosts in the same order, once each.
	var paged []string
	for page := 0; ; page++ {
		var d hostsDoc
		getJSON(t, h, fmt.Sprintf("/?format=json&per=1&page=%d", page), &d)
		if d.Total != 4 {
			t.Fatalf("page %d: total %d", page, d.Total)
		}
		if len(d.Hosts) == 0 {
			break
		}
		paged = append(paged, hostNamesOf(d)...)
	}
	if !slices.Equal(paged, hostNamesOf(all)) {
		t.Errorf("pages of 1: %v, want %v", paged, hostNamesOf(all))
	}
	for _, c := range []struct {
		query string
		want  func(name string) bool
	}{
		{"host=NODE0", func(n string) bool { return strings.HasPrefix(n, "node0") }},
		{"host=de02", func(n string) bool { return n == "node02" }},
		{"label=planted", func(n string) bool { return n == "node02" }},
		{"label=node03-w001", func(n string) bool { return n == "node03" }},
		{"verdict=worse", func(n string) bool { return slices.Contains(mapValues(verdict[n]), compare.Worse) }},
		{"verdict=worse&probe=syscall", func(n string) bool { return verdict[n]["syscall"] == compare.Worse }},
		{"probe=cpu", func(n string) bool { _, ok := verdict[n]["cpu"]; return ok || n == "vm" }},
		{"verdict=pending", func(string) bool { return false }}, // every verdict was computed for the page
		{"host=nosuchhost", func(string) bool { return false }},
	} {
		var d hostsDoc
		getJSON(t, h, "/?format=json&per=500&"+c.query, &d)
		var want []string
		for _, n := range hostNamesOf(all) {
			if c.want(n) {
				want = append(want, n)
			}
		}
		if got := hostNamesOf(d); !slices.Equal(got, want) || d.Total != len(want) {
			t.Errorf("%s: %v (total %d), want %v", c.query, got, d.Total, want)
		}
	}
	var byName hostsDoc
	getJSON(t, h, "/?format=json&sort=name", &byName)
	if names := hostNamesOf(byName); !slices.IsSorted(names) || len(names) != 4 {
		t.Errorf("sort=name: %v", names)
	}
	for _, u := range []string{"/?verdict=awful", "/?per=0", "/?per=501", "/?sort=best", "/?page=-1", "/?host=a%20b"} {
		if code, body := get(t, h, u); code != http.StatusBadRequest || strings.Count(strings.TrimSpace(body), "\n") > 0 {
			t.Errorf("%s: %d %q, want 400 and one line", u, code, body)
		}
	}
}

func mapValues(m map[string]compare.Verdict) []compare.Verdict {
	var out []compare.Verdict
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// A console started from the index's cache file shows the verdicts it
// computed before without computing them again; a run added since makes
// its pair pending again when the store is read.
func TestIndexCache(t *testing.T) {
	path := smallStore(t)
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(path) // read-write: sees the run added below
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s1 := New(st, Config{Listen: "127.0.0.1:0", CacheDir: dir})
	s1.build(ctx)
	if ix := s1.indexState(); ix.Pending != 0 || ix.Hosts != 4 {
		t.Fatalf("after build: %+v", ix)
	}
	var want hostsDoc
	getJSON(t, s1.Handler(), "/?format=json", &want)
	files, _ := filepath.Glob(filepath.Join(dir, "console-index-*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files: %v", files)
	}

	s2 := New(st, Config{Listen: "127.0.0.1:0", CacheDir: dir})
	s2.ix.loadCache(st.Path)
	if ix := s2.indexState(); ix.Pending != 0 || ix.Hosts != 4 {
		t.Fatalf("from the cache: %+v", ix)
	}
	var got hostsDoc
	getJSON(t, s2.Handler(), "/?format=json", &got)
	gj, _ := json.Marshal(got.Hosts)
	wj, _ := json.Marshal(want.Hosts)
	if string(gj) != string(wj) {
		t.Errorf("from the cache:\n%s\nwant\n%s", gj, wj)
	}

	newer := &run.Run{ID: "newer", Probe: "cpu", Host: "node03", Started: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		Complete: true, Metrics: []run.Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}},
		Samples: []run.Sample{{Metric: "events_per_sec.t1", Iteration: 0, Value: 1}}}
	newer.Ended = newer.Started.Add(time.Second)
	if err := st.SaveRun(ctx, newer, nil); err != nil {
		t.Fatal(err)
	}
	if err := s2.readAggregate(ctx); err != nil {
		t.Fatal(err)
	}
	if ix := s2.indexState(); ix.Pending != 1 {
		t.Errorf("after a new run of node03 cpu: %d pending, want 1", ix.Pending)
	}
}
