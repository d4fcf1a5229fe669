package serve

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// historyRuns is how many earlier runs per probe and host feed the A/A
// noise floor, as 'perflab compare' reads them.
const historyRuns = 20

// compare is 'perflab compare' over the store: each s= names a side as
// the command's argument does (a label, meaning all its runs, or a run id
// or unique prefix), or host:NAME for the newest run of every probe on a
// host (probe= narrows it to one probe). The page, JSON and HTML are the
// report package's, so they show what the command shows.
func (s *Server) compare(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "s*", "probe", "nohistory")
	names := p.strs("s", maxSides)
	probe := p.probe("probe")
	noHistory := q.Get("nohistory") == "1"
	if p.err != nil {
		return nil, p.err
	}
	form := s.compareNav(ctx, names, probe) // beside the comparison: a tenth of a cold one's time
	if len(names) < 2 {
		f, err := form()
		if err != nil {
			return nil, err
		}
		return &result{View: "compare", Title: "perflab: compare", Nav: f.html,
			Data: map[string]any{"sides": names, "labels": f.labels, "hosts": f.hosts, "note": "choose two or more sides"}}, nil
	}
	sel, err := s.compareKey(ctx, names, probe, noHistory)
	if err != nil {
		return nil, err
	}
	c, err := s.comparison(ctx, sel, names, probe)
	if err != nil {
		return nil, err
	}
	f, err := form()
	if err != nil {
		return nil, err
	}
	navForm := f.html
	for _, n := range sel.notes {
		navForm += `<p class="pl-sel"><b>` + html.EscapeString(n) + `</b></p>`
	}
	return &result{View: "compare", Title: "perflab compare: " + strings.Join(names, " vs "), Nav: navForm, Data: c,
		JSON: func(w io.Writer) error { return report.JSON(w, c) },
		HTML: func(w io.Writer) error { return report.HTML(w, c) }}, nil
}

// navForm is the compare page's selection form and what it offers.
type navForm struct {
	html   string
	labels []store.LabelCount
	hosts  []store.HostSummary
}

// compareNav starts reading what the compare form offers (the recent
// labels and the hosts) on a goroutine and returns the wait for the form.
func (s *Server) compareNav(ctx context.Context, names []string, probe string) func() (navForm, error) {
	type result struct {
		f   navForm
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.f.labels, r.err = s.recentLabels(ctx)
		if r.err == nil {
			r.f.hosts, r.err = s.hostNames(ctx, maxListedHosts)
		}
		if r.err == nil {
			r.f.html = compareForm(names, probe, r.f.labels, r.f.hosts)
		}
		done <- r
	}()
	return func() (navForm, error) {
		r := <-done
		return r.f, r.err
	}
}

// recentLabels is the compare form's labels of one generation of the
// index.
type recentLabels struct {
	gen    int
	labels []store.LabelCount
}

// recentLabels is the labels the compare form offers (Store.RecentLabels):
// read once per generation of the index, as the hosts page's label sets
// are (labelHosts), and first by the start-up prime (warm.go): reading
// 5,000 runs' labels was a tenth of a cold comparison's CPU, for a list.
func (s *Server) recentLabels(ctx context.Context) ([]store.LabelCount, error) {
	ix := &s.ix
	ix.mu.Lock()
	r, gen := ix.recent, ix.gen
	ix.mu.Unlock()
	if r != nil && r.gen == gen {
		return r.labels, nil
	}
	labels, err := s.st.RecentLabels(ctx, labelScan, maxListedLabels)
	if err != nil {
		return nil, err
	}
	ix.mu.Lock()
	if ix.gen == gen {
		ix.recent = &recentLabels{gen: gen, labels: labels}
	}
	ix.mu.Unlock()
	return labels, nil
}

// The compare form offers the labels of the newest labelScan runs, at most
// maxListedLabels of them: grouping a million runs by label per request
// would cost more than the page may take.
const (
	labelScan       = 5000
	maxListedLabels = 200
)

// putBounded stores v under k in the cache m (guarded by mu), emptying m
// first when it holds max entries: the server's caches hold values that
// never change once computed, so forgetting them all costs only a recompute.
func putBounded[K comparable, V any](mu *sync.Mutex, m map[K]V, k K, v V, max int) {
	mu.Lock()
	defer mu.Unlock()
	if len(m) >= max {
		clear(m)
	}
	m[k] = v
}

// maxCompareCache bounds the cache of comparisons.
const maxCompareCache = 64

// compareMostRuns bounds a label side: a label of more runs is compared
// by the newest compareProbeRuns runs of each of its probes (the newest
// runs overall may all be of one probe), without the noise history (the
// sides' own runs, from many hosts, carry the run-to-run and host-to-host
// spread), and the page says so, with the command that compares every
// run. A label spanning a fleet store (a million runs) would otherwise
// take minutes. Variables for the tests.
var (
	compareMostRuns  = 200
	compareProbeRuns = 20
)

// compareMonitorRuns bounds a bounded label side's monitor diff: it is
// made from the series of the side's newest compareMonitorRuns runs of
// each probe (a point a second of host activity: 50 runs of 10 probes
// give ~250 points a side), and the page says so. Decoding every run's
// series was the largest part of a cold comparison of two labels
// spanning a fleet store (docs/performance.md). Variable for the tests.
var compareMonitorRuns = 5

// selection is what a comparison is of: its cache key (the ids of the
// runs of every side and of the noise history), whether the noise
// history is read, and what the page must say about bounded sides.
type selection struct {
	key       string
	noHistory bool
	notes     []string
	bounded   map[string][]store.RunRef // a bounded label side's runs, by name
}

// comparison computes the comparison of the sides, or returns the one
// computed before for the same key: the same runs on every side and in
// the history, which never change once stored (a run id is written once;
// a deleted or added run changes the key).
func (s *Server) comparison(ctx context.Context, sel selection, names []string, probe string) (*compare.Comparison, error) {
	key := sel.key
	s.mu.Lock()
	c, ok := s.compares[key]
	s.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := s.compareSides(ctx, sel, names, probe)
	if err != nil {
		return nil, err
	}
	putBounded(&s.mu, s.compares, key, c, maxCompareCache)
	return c, nil
}

// compareSides is comparison without the cache.
func (s *Server) compareSides(ctx context.Context, sel selection, names []string, probe string) (*compare.Comparison, error) {
	// Each side is read once (a side named twice, an A/A check, too), all
	// at once: decoding their runs' documents is CPU work, and two
	// store-spanning labels decode 200 each.
	byName, err := byDistinctName(names, func(n string) (compare.Side, error) {
		if refs, bounded := sel.bounded[n]; bounded {
			return s.boundedSide(ctx, n, refs)
		}
		return s.side(ctx, n, probe)
	})
	if err != nil {
		return nil, err
	}
	sides := make([]compare.Side, 0, len(names))
	for _, n := range names {
		sides = append(sides, byName[n])
	}
	opt := compare.Options{}
	if !sel.noHistory {
		if opt.History, err = s.historyOf(ctx, sides); err != nil {
			return nil, err
		}
	}
	c, err := compare.Compare(sides, opt)
	if err != nil {
		return nil, badf("%v", err)
	}
	c.Notes = append(slices.Clip(sel.notes), c.Notes...)
	return c, nil
}

// compareKey names a selection by the ids of the runs it resolves to, on
// each side and in the noise history, read from the index without loading
// any run but one named by id. A label side of more than compareMostRuns
// runs is bounded to the newest runs of each probe (bounded; the notes
// say so) and then no side reads the noise history.
func (s *Server) compareKey(ctx context.Context, names []string, probe string, noHistory bool) (selection, error) {
	var sel selection
	// Each name is resolved once, all at once (their queries are
	// independent; two labels spanning a fleet store take four).
	type resolved struct {
		refs []store.RunRef
		note string
	}
	byName, err := byDistinctName(names, func(n string) (resolved, error) {
		refs, note, err := s.bounded(ctx, n)
		if err == nil && note == "" {
			refs, err = s.sideRefs(ctx, n, probe)
		}
		return resolved{refs, note}, err
	})
	if err != nil {
		return sel, err
	}
	sides := make([][]store.RunRef, len(names))
	for i, n := range names {
		r := byName[n]
		sides[i] = r.refs
		if _, named := sel.bounded[n]; r.note != "" && !named {
			if sel.bounded == nil {
				sel.bounded = map[string][]store.RunRef{}
			}
			sel.bounded[n] = r.refs
			sel.notes = append(sel.notes, r.note)
		}
	}
	if len(sel.notes) > 0 {
		sel.notes = append(sel.notes, fmt.Sprintf("The console compares a label of more than %d runs by the newest %d runs of each probe, without the noise history of earlier runs; every run: perflab compare %s --db STORE", compareMostRuns, compareProbeRuns, shellQuote(names)))
		noHistory = true
	}
	sel.noHistory = noHistory
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %v", names, probe, noHistory)
	seen := map[[2]string]bool{}
	var keys [][2]string
	note := func(r store.RunRef) {
		b.WriteString(" " + r.ID)
		if k := [2]string{r.Probe, r.Host}; !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, refs := range sides {
		b.WriteString(" |")
		for _, r := range refs {
			note(r)
		}
	}
	if !noHistory {
		b.WriteString(" |")
		hist, err := s.st.NewestRefs(ctx, keys, historyRuns)
		if err != nil {
			return sel, err
		}
		for _, refs := range hist {
			for _, r := range refs {
				b.WriteString(" " + r.ID)
			}
		}
	}
	sel.key = b.String()
	return sel, nil
}

// byDistinctName runs fn once for each distinct name, all at once, and
// returns the results by name, or the error of the first name (in names'
// order) whose fn failed.
func byDistinctName[T any](names []string, fn func(name string) (T, error)) (map[string]T, error) {
	type result struct {
		v   T
		err error
	}
	byName := map[string]*result{}
	var wg sync.WaitGroup
	for _, n := range names {
		if byName[n] != nil {
			continue
		}
		r := &result{}
		byName[n] = r
		wg.Go(func() { r.v, r.err = fn(n) })
	}
	wg.Wait()
	out := make(map[string]T, len(byName))
	for _, n := range names {
		if err := byName[n].err; err != nil {
			return nil, err
		}
		out[n] = byName[n].v
	}
	return out, nil
}

// bounded is, for a label side of more than compareMostRuns runs, the
// newest compareProbeRuns runs of each probe and the note saying so; nil
// and "" for any other side. Asked first, from the label's run count: a
// bounded side's newest runs are never read.
func (s *Server) bounded(ctx context.Context, name string) ([]store.RunRef, string, error) {
	if strings.HasPrefix(name, "host:") {
		return nil, "", nil
	}
	n, err := s.st.LabelRuns(ctx, name)
	if err != nil || n <= compareMostRuns {
		return nil, "", err
	}
	probes, err := s.indexProbes(ctx)
	if err != nil {
		return nil, "", err
	}
	per, err := s.st.LabelProbeRefs(ctx, name, probes, compareProbeRuns)
	if err != nil {
		return nil, "", err
	}
	var out []store.RunRef
	for _, rs := range per {
		out = append(out, rs...)
	}
	return out, fmt.Sprintf("%s: the newest %d runs of each probe, %d of its %d runs; its monitor diff from the newest %d of each probe", name, compareProbeRuns, len(out), n, min(compareMonitorRuns, compareProbeRuns)), nil
}

// indexProbes lists the probes the host index knows, sorted: the list
// setHosts keeps (ranging over ten thousand hosts' pairs per request was a
// quarter of a cold label comparison's CPU).
func (s *Server) indexProbes(ctx context.Context) ([]string, error) {
	if err := s.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	return slices.Clone(s.ix.probes), nil
}

// shellQuote is names as shell words.
func shellQuote(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "'" + strings.ReplaceAll(n, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// sideRefs is the runs side() resolves name to, as list entries: a
// label's newest compareMostRuns.
func (s *Server) sideRefs(ctx context.Context, name, probe string) ([]store.RunRef, error) {
	if host, ok := strings.CutPrefix(name, "host:"); ok {
		return s.st.NewestOfHost(ctx, host, probe)
	}
	refs, _, err := s.st.RunRefs(ctx, store.Page{Filter: store.Filter{Label: name, Limit: compareMostRuns}, CountMost: 1})
	if err != nil || len(refs) > 0 {
		return refs, err
	}
	sd, err := s.side(ctx, name, probe)
	if err != nil {
		return nil, err
	}
	r := sd.Runs[0]
	return []store.RunRef{{ID: r.ID, Probe: r.Probe, Host: r.Host}}, nil
}

// Side resolves one side from the store as 'perflab compare' resolves an
// argument that is not a file; exported for the test that holds the two
// to the same output.
func (s *Server) side(ctx context.Context, name, probe string) (compare.Side, error) {
	side := compare.Side{Name: name, Snapshots: map[string]*snapshot.Snapshot{}}
	var runs []*run.Run
	var err error
	if host, ok := strings.CutPrefix(name, "host:"); ok {
		runs, err = s.newestPerProbe(ctx, host, probe)
	} else {
		runs, err = s.st.RunsBatch(ctx, store.Filter{Label: name, Limit: compareMostRuns})
	}
	if err != nil {
		return side, err
	}
	if len(runs) == 0 && !strings.HasPrefix(name, "host:") {
		r, err := s.st.Run(ctx, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return side, &notFound{name + " is neither a label nor a run id"}
		case errors.Is(err, store.ErrAmbiguous):
			return side, badf("%v", err)
		case err != nil:
			return side, err
		}
		runs = []*run.Run{r}
	}
	if len(runs) == 0 {
		return side, &notFound{"no runs for " + name}
	}
	side.Runs = runs
	s.explainingSnapshot(ctx, &side)
	return side, nil
}

// boundedSide is a bounded label side: the runs refs list (each probe's
// newest first), with the monitor series of the first compareMonitorRuns
// of each probe.
func (s *Server) boundedSide(ctx context.Context, name string, refs []store.RunRef) (compare.Side, error) {
	side := compare.Side{Name: name, Snapshots: map[string]*snapshot.Snapshot{}}
	ids := make([]string, len(refs))
	var series []string
	perProbe := map[string]int{}
	for i, r := range refs {
		ids[i] = r.ID
		if perProbe[r.Probe] < compareMonitorRuns {
			perProbe[r.Probe]++
			series = append(series, r.ID)
		}
	}
	var err error
	side.Runs, err = s.st.RunsByIDsSeriesOf(ctx, ids, series)
	if err == nil && len(side.Runs) < len(ids) {
		err = errDeletedMeanwhile
	}
	if err != nil {
		return side, err
	}
	s.explainingSnapshot(ctx, &side)
	return side, nil
}

// explainingSnapshot reads the snapshot the comparison explains by: that
// of the side's first run that has one stored (compare.SideInfo). The
// others are not read: a side of 500 runs from as many hosts would read
// 500 documents.
func (s *Server) explainingSnapshot(ctx context.Context, side *compare.Side) {
	for _, r := range side.Runs {
		if r.SnapshotID == "" {
			continue
		}
		if snap, err := s.st.Snapshot(ctx, r.SnapshotID); err == nil {
			side.Snapshots[r.SnapshotID] = snap
			return
		}
	}
}

// newestPerProbe is the newest run of each probe on host (of probe only,
// when given).
func (s *Server) newestPerProbe(ctx context.Context, host, probe string) ([]*run.Run, error) {
	refs, err := s.st.NewestOfHost(ctx, host, probe)
	if err != nil {
		return nil, err
	}
	return s.runsOf(ctx, refs)
}

// runsOf loads the runs refs list, in their order, in one batch; a run
// deleted meanwhile is not found, as Store.Run would say.
func (s *Server) runsOf(ctx context.Context, refs []store.RunRef) ([]*run.Run, error) {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	runs, err := s.st.RunsByIDs(ctx, ids)
	if err == nil && len(runs) < len(ids) {
		err = errDeletedMeanwhile
	}
	return runs, err
}

// errDeletedMeanwhile is a selection's answer when a run it listed is
// gone by the time it is read, as Store.Run would say.
var errDeletedMeanwhile = &notFound{"a run of the selection was deleted meanwhile; load the page again"}

// historyOf is the earlier runs of the sides' probes on their hosts, as
// 'perflab compare' loads them for the A/A noise floor.
func (s *Server) historyOf(ctx context.Context, sides []compare.Side) ([]*run.Run, error) {
	type ph struct{ probe, host string }
	seen := map[ph]bool{}
	var keys []ph
	for _, sd := range sides {
		for _, r := range sd.Runs {
			k := ph{r.Probe, r.Host}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].probe+keys[i].host < keys[j].probe+keys[j].host })
	pairs := make([][2]string, len(keys))
	for i, k := range keys {
		pairs[i] = [2]string{k.probe, k.host}
	}
	refs, err := s.st.NewestRefs(ctx, pairs, historyRuns)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, rs := range refs {
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
	}
	return s.st.HistoryRunsByIDs(ctx, ids) // a run deleted meanwhile is left out, as a query per pair would
}

// compareForm is the selection above the comparison: the sides as text
// fields with the labels and hosts offered in a datalist.
func compareForm(names []string, probe string, labels []store.LabelCount, hs []store.HostSummary) string {
	var b strings.Builder
	b.WriteString(`<form class="pl-sel" method="get" action="/compare">Sides: `)
	for i := 0; i < max(len(names)+1, 2) && i < maxSides; i++ {
		v := ""
		if i < len(names) {
			v = names[i]
		}
		b.WriteString(`<input name="s" list="pl-sides" size="14" value="` + html.EscapeString(v) + `">`)
	}
	b.WriteString(`probe <input name="probe" size="10" value="` + html.EscapeString(probe) + `"><button>compare</button><datalist id="pl-sides">`)
	for i, l := range labels {
		if i == 200 {
			break
		}
		b.WriteString(`<option value="` + html.EscapeString(l.Label) + `">`)
	}
	for _, h := range hs {
		b.WriteString(`<option value="host:` + html.EscapeString(h.Host) + `">`)
	}
	b.WriteString(`</datalist></form>`)
	return b.String()
}
