package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/run"
)

// The queries of the web console (internal/serve): bounded, paginated and
// served by the indices of migration 2, so that a page stays fast on a
// store of 10,000 runs.

// HostSummary is one host of the store.
type HostSummary struct {
	Host     string    `json:"host"`
	Runs     int       `json:"runs"`
	LastRun  time.Time `json:"last_run"`
	Snapshot string    `json:"snapshot_id,omitempty"` // the newest snapshot taken on the host
	SnapAt   time.Time `json:"snapshot_taken_at,omitzero"`
}

// Hosts lists the hosts that have runs, by name.
func (s *Store) Hosts(ctx context.Context) ([]HostSummary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT host, count(*), max(started) FROM runs GROUP BY host ORDER BY host`)
	if err != nil {
		return nil, err
	}
	var out []HostSummary
	for rows.Next() {
		var h HostSummary
		var last int64
		if err := rows.Scan(&h.Host, &h.Runs, &last); err != nil {
			rows.Close()
			return nil, err
		}
		h.LastRun = time.Unix(0, last).UTC()
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		snaps, err := s.SnapshotsOf(ctx, out[i].Host, 1)
		if err != nil {
			return nil, err
		}
		if len(snaps) > 0 {
			out[i].Snapshot, out[i].SnapAt = snaps[0].ID, snaps[0].TakenAt
		}
	}
	return out, nil
}

// SnapshotRef names a stored snapshot.
type SnapshotRef struct {
	ID      string    `json:"id"`
	Host    string    `json:"host"`
	TakenAt time.Time `json:"taken_at"`
}

// SnapshotsOf lists up to limit snapshots taken on host, newest first.
func (s *Store) SnapshotsOf(ctx context.Context, host string, limit int) ([]SnapshotRef, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, taken_at FROM snapshots WHERE host = ? ORDER BY taken_at DESC, `+s.d.byteOrder("id")+fmt.Sprintf(` LIMIT %d`, max(limit, 1))), host)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SnapshotRef
	for rows.Next() {
		r := SnapshotRef{Host: host}
		var at int64
		if err := rows.Scan(&r.ID, &at); err != nil {
			return nil, err
		}
		r.TakenAt = time.Unix(0, at).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunRef is a run's list entry, without its document or samples.
type RunRef struct {
	ID       string    `json:"id"`
	Label    string    `json:"label,omitempty"`
	Suite    string    `json:"suite,omitempty"`
	Probe    string    `json:"probe"`
	Host     string    `json:"host"`
	Snapshot string    `json:"snapshot_id,omitempty"`
	Started  time.Time `json:"started"`
	Complete bool      `json:"complete"`
}

// Page selects a window of runs: Filter's fields, a time range
// [From, To) (zero means open), and Offset/Limit for paging.
type Page struct {
	Filter
	From, To time.Time
	Offset   int
	// CountMost bounds RunRefs' count: at most CountMost+1 runs are
	// counted (0 counts all), so a page of a million runs can say "more
	// than CountMost" without counting them.
	CountMost int
}

func (s *Store) pageWhere(p Page) (string, []any) {
	var where []string
	var args []any
	for _, c := range []struct{ col, val string }{{"label", p.Label}, {"probe", p.Probe}, {"host", p.Host}, {"suite", p.Suite}} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if !p.From.IsZero() {
		where = append(where, "started >= ?")
		args = append(args, p.From.UnixNano())
	}
	if !p.To.IsZero() {
		where = append(where, "started < ?")
		args = append(args, p.To.UnixNano())
	}
	if len(where) == 0 {
		return "", nil
	}
	return ` WHERE ` + strings.Join(where, " AND "), args
}

// RunRefs lists the runs of p, newest first, and how many match in all.
func (s *Store) RunRefs(ctx context.Context, p Page) ([]RunRef, int, error) {
	where, args := s.pageWhere(p)
	var total int
	count := `SELECT count(*) FROM runs` + where
	if p.CountMost > 0 {
		count = fmt.Sprintf(`SELECT count(*) FROM (SELECT 1 FROM runs%s LIMIT %d) c`, where, p.CountMost+1)
	}
	if err := s.db.QueryRowContext(ctx, s.q(count), args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	q := `SELECT ` + runRefsColumns + ` FROM runs` + where +
		` ORDER BY started DESC, ` + s.d.byteOrder("id") + fmt.Sprintf(` LIMIT %d OFFSET %d`, max(p.Limit, 1), max(p.Offset, 0))
	out, err := s.runRefs(ctx, q, args, nil)
	return out, total, err
}

// runRefsColumns are the columns runRefs scans, in its order.
const runRefsColumns = `id, label, suite, probe, host, snapshot_id, started, complete`

// runRefs runs q (selecting runRefsColumns) and returns its rows, skipping
// those skip reports true for given the rows kept so far.
func (s *Store) runRefs(ctx context.Context, q string, args []any, skip func(kept []RunRef, r RunRef) bool) ([]RunRef, error) {
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RunRef
	for rows.Next() {
		var r RunRef
		var at int64
		var complete int
		if err := rows.Scan(&r.ID, &r.Label, &r.Suite, &r.Probe, &r.Host, &r.Snapshot, &at, &complete); err != nil {
			return nil, err
		}
		if skip != nil && skip(out, r) {
			continue
		}
		r.Started, r.Complete = time.Unix(0, at).UTC(), complete != 0
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunsPage loads the runs of p (documents and samples), newest first.
func (s *Store) RunsPage(ctx context.Context, p Page) ([]*run.Run, error) {
	where, args := s.pageWhere(p)
	q := `SELECT id, doc FROM runs` + where + ` ORDER BY started DESC, ` + s.d.byteOrder("id") +
		fmt.Sprintf(` LIMIT %d OFFSET %d`, max(p.Limit, 1), max(p.Offset, 0))
	return s.loadRunsBatch(ctx, q, args)
}

// ProbeHost is a probe measured on a host, with its newest run.
type ProbeHost struct {
	Probe  string `json:"probe"`
	Host   string `json:"host"`
	Runs   int    `json:"runs"`
	Newest string `json:"newest_run"`
}

// ProbeHosts lists every probe and host pair with runs.
func (s *Store) ProbeHosts(ctx context.Context) ([]ProbeHost, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT probe, host, count(*), max(started) FROM runs GROUP BY probe, host ORDER BY probe, host`)
	if err != nil {
		return nil, err
	}
	var out []ProbeHost
	var newest []int64
	for rows.Next() {
		var p ProbeHost
		var at int64
		if err := rows.Scan(&p.Probe, &p.Host, &p.Runs, &at); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, p)
		newest = append(newest, at)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		err := s.db.QueryRowContext(ctx, s.q(`SELECT id FROM runs WHERE probe = ? AND host = ? AND started = ? ORDER BY `+s.d.byteOrder("id")+` LIMIT 1`),
			out[i].Probe, out[i].Host, newest[i]).Scan(&out[i].Newest)
		if err != nil && err != sql.ErrNoRows {
			return nil, err
		}
	}
	return out, nil
}

// MetricRun is one run's samples of one metric, with what tells
// measurements apart (parameters and placement) but without the rest of
// its document.
type MetricRun struct {
	ID       string
	Started  time.Time
	Complete bool
	Params   map[string]string
	CPUs     string
	Values   []float64
}

// MetricRuns returns the runs of p (newest first) with their samples of
// metric only: a fraction of RunsPage's cost, for summaries over many runs.
func (s *Store) MetricRuns(ctx context.Context, p Page, metric string) ([]MetricRun, error) {
	where, args := s.pageWhere(p)
	lim := fmt.Sprintf(` LIMIT %d OFFSET %d`, max(p.Limit, 1), max(p.Offset, 0))
	order := ` ORDER BY started DESC, ` + s.d.byteOrder("id")
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, started, complete, doc FROM runs`+where+order+lim), args...)
	if err != nil {
		return nil, err
	}
	var out []MetricRun
	idx := map[string]int{}
	for rows.Next() {
		var r MetricRun
		var at int64
		var complete int
		var doc string
		if err := rows.Scan(&r.ID, &at, &complete, &doc); err != nil {
			rows.Close()
			return nil, err
		}
		if err := runHead(doc, &r); err != nil {
			rows.Close()
			return nil, fmt.Errorf("run %s: stored document is corrupt: %w", r.ID, err)
		}
		r.Started, r.Complete = time.Unix(0, at).UTC(), complete != 0
		idx[r.ID] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	q := `SELECT s.run_id, s.value FROM samples s JOIN (SELECT id FROM runs` + where + order + lim +
		`) r ON s.run_id = r.id WHERE s.metric = ? ORDER BY s.iteration`
	rows, err = s.db.QueryContext(ctx, s.q(q), append(args, metric)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var v float64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		if i, ok := idx[id]; ok {
			out[i].Values = append(out[i].Values, v)
		}
	}
	return out, rows.Err()
}

// runHead reads params and cpus from a stored run document without
// decoding the rest: the document is run.Run as encoding/json writes it,
// whose small fields come before metrics, samples and the monitor series,
// so reading stops at "metrics". A document in another order is read to
// its end, which is slower but as correct.
func runHead(doc string, r *MetricRun) error {
	dec := json.NewDecoder(strings.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case "params":
			err = dec.Decode(&r.Params)
		case "cpus":
			err = dec.Decode(&r.CPUs)
		case "metrics":
			return nil
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// PairSig is one probe measured on one host, summarised by one aggregate
// query: how many runs, the newest (ORDER BY started DESC, id bytewise, as
// every list of this package orders), and a signature of the set of runs
// (their count and the sum of their start seconds), which changes when a
// run is added or deleted, also one older than the newest.
type PairSig struct {
	Probe    string
	Host     string
	Runs     int
	Newest   string
	NewestAt time.Time
	Sig      string
}

// HostSnap is a host's newest snapshot.
type HostSnap struct {
	Host    string
	ID      string
	TakenAt time.Time
}

// ConsoleIndex reads what the console's host index needs in two aggregate
// queries (no query per host): every probe and host pair with its newest
// run and signature, and every host's newest snapshot. Its cost grows
// with the number of runs (one pass over the runs table and its
// (probe, host, started) index), so the console runs it in the background,
// not per request.
func (s *Store) ConsoleIndex(ctx context.Context) ([]PairSig, []HostSnap, error) {
	q := `SELECT r.probe, r.host, a.n, a.secs, a.last, min(` + s.d.byteOrder("r.id") + `)
		FROM runs r JOIN (SELECT probe, host, count(*) AS n, sum(started / 1000000000) AS secs, max(started) AS last
			FROM runs GROUP BY probe, host) a
		ON r.probe = a.probe AND r.host = a.host AND r.started = a.last
		GROUP BY r.probe, r.host, a.n, a.secs, a.last`
	rows, err := s.db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	var pairs []PairSig
	for rows.Next() {
		var p PairSig
		var secs, last int64
		if err := rows.Scan(&p.Probe, &p.Host, &p.Runs, &secs, &last, &p.Newest); err != nil {
			rows.Close()
			return nil, nil, err
		}
		p.NewestAt = time.Unix(0, last).UTC()
		p.Sig = fmt.Sprintf("%d/%d/%s", p.Runs, secs, p.Newest)
		pairs = append(pairs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	sq := `SELECT s.host, min(` + s.d.byteOrder("s.id") + `), a.last
		FROM snapshots s JOIN (SELECT host, max(taken_at) AS last FROM snapshots GROUP BY host) a
		ON s.host = a.host AND s.taken_at = a.last GROUP BY s.host, a.last`
	rows, err = s.db.QueryContext(ctx, sq)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var snaps []HostSnap
	for rows.Next() {
		var h HostSnap
		var at int64
		if err := rows.Scan(&h.Host, &h.ID, &at); err != nil {
			return nil, nil, err
		}
		h.TakenAt = time.Unix(0, at).UTC()
		snaps = append(snaps, h)
	}
	return pairs, snaps, rows.Err()
}

// HostsWithLabel lists the hosts that have runs labelled label: from
// host_labels (schema 7: one index range, a row per host), or on an older
// store opened read-only from runs (every run under the label).
func (s *Store) HostsWithLabel(ctx context.Context, label string) (map[string]bool, error) {
	kept, err := s.keepsHostLabels(ctx)
	if err != nil {
		return nil, err
	}
	q := `SELECT host FROM host_labels WHERE label = ?`
	if !kept {
		q = `SELECT DISTINCT host FROM runs WHERE label = ?`
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), label)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out[h] = true
	}
	return out, rows.Err()
}

// RecentLabels lists the labels of the newest runs (at most scan runs read,
// through the runs (started) index), newest first, at most most labels:
// what a selection offers without grouping a store of a million runs.
func (s *Store) RecentLabels(ctx context.Context, scan, most int) ([]LabelCount, error) {
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(`SELECT label, started FROM runs ORDER BY started DESC LIMIT %d`, max(scan, 1)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LabelCount
	idx := map[string]int{}
	for rows.Next() {
		var l string
		var at int64
		if err := rows.Scan(&l, &at); err != nil {
			return nil, err
		}
		if l == "" {
			continue
		}
		if i, ok := idx[l]; ok {
			out[i].Runs++
			continue
		}
		if len(out) >= most {
			continue
		}
		idx[l] = len(out)
		out = append(out, LabelCount{Label: l, Runs: 1, Newest: time.Unix(0, at).UTC()})
	}
	return out, rows.Err()
}

// NewestOfHost is the newest run of each probe on host (of probe only,
// when not empty), by probe name: 'compare host:NAME' without reading
// every host's pairs.
func (s *Store) NewestOfHost(ctx context.Context, host, probe string) ([]RunRef, error) {
	q := `SELECT ` + runRefsColumns + ` FROM runs WHERE host = ?`
	args := []any{host}
	if probe != "" {
		q += ` AND probe = ?`
		args = append(args, probe)
	}
	// Newest first within each probe: keep the first row of each.
	return s.runRefs(ctx, q+` ORDER BY `+s.d.byteOrder("probe")+`, started DESC, `+s.d.byteOrder("id"), args,
		func(kept []RunRef, r RunRef) bool { return len(kept) > 0 && kept[len(kept)-1].Probe == r.Probe })
}

// StoreSig is the number of runs and the newest start: it changes when
// runs are added or deleted, which is when the console's host index is
// read again. A count over a million runs is an index-only scan.
func (s *Store) StoreSig(ctx context.Context) (string, error) {
	var n int
	var last sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), max(started) FROM runs`).Scan(&n, &last); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d/%d", n, last.Int64), nil
}

// RunsBatch is Runs (same selection, same order, same documents and
// samples) with every run's samples read in one query instead of one per
// run: the console loads 31 runs per verdict and 100 per history series.
func (s *Store) RunsBatch(ctx context.Context, f Filter) ([]*run.Run, error) {
	p := Page{Filter: f}
	where, args := s.pageWhere(p)
	q := `SELECT id, doc FROM runs` + where + ` ORDER BY started DESC, ` + s.d.byteOrder("id")
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	return s.loadRunsBatch(ctx, q, args)
}

// loadRunsBatch is loadRuns with one query for all the samples.
func (s *Store) loadRunsBatch(ctx context.Context, q string, args []any) ([]*run.Run, error) {
	return s.loadRunsWith(ctx, q, args, readWhole)
}

// runRead is how much of each run loadRunsWith reads.
type runRead int

const (
	readWhole      runRead = iota // the document, samples and monitor series
	readNoSeries                  // the document and samples (the caller attaches the series)
	readForHistory                // what a comparison's noise history reads (decodeHistoryRun) and samples
)

// loadRunsWith is loadRunsBatch reading as much of each run as read says.
func (s *Store) loadRunsWith(ctx context.Context, q string, args []any, read runRead) ([]*run.Run, error) {
	decode := decodeRun
	if read == readForHistory {
		decode = decodeHistoryRun
	}
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, err
	}
	var out []*run.Run
	var colIDs []any
	idx := map[string]*run.Run{}
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			rows.Close()
			return nil, err
		}
		r, err := decode(id, doc)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
		idx[id] = r
		colIDs = append(colIDs, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	ids := colIDs
	// At most sampleIDs ids a query: both backends bound the parameters.
	for start := 0; start < len(ids); start += sampleIDs {
		chunk := ids[start:min(start+sampleIDs, len(ids))]
		if err := s.attachSamples(ctx, chunk, idx); err != nil {
			return nil, err
		}
		if read != readWhole {
			continue
		}
		if err := s.attachSeries(ctx, chunk, idx); err != nil {
			return nil, err
		}
	}
	for _, r := range out {
		sortSamples(r)
	}
	return out, nil
}

// sampleIDs is how many runs' samples one query reads.
const sampleIDs = 500

func (s *Store) attachSamples(ctx context.Context, ids []any, idx map[string]*run.Run) error {
	sq := `SELECT run_id, metric, iteration, value FROM samples WHERE run_id IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + `) ORDER BY iteration, metric`
	rows, err := s.db.QueryContext(ctx, s.q(sq), ids...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var x run.Sample
		if err := rows.Scan(&id, &x.Metric, &x.Iteration, &x.Value); err != nil {
			return err
		}
		if r := idx[id]; r != nil {
			r.Samples = append(r.Samples, x)
		}
	}
	return rows.Err()
}

// RunsByIDs loads the runs with these full ids (documents and samples, as
// RunsBatch loads them) in the order of ids, with one query for the
// documents and one for the samples of every sampleIDs runs; an id not
// stored is left out. A comparison loads its sides and noise history so,
// instead of two queries a run.
func (s *Store) RunsByIDs(ctx context.Context, ids []string) ([]*run.Run, error) {
	return s.runsByIDs(ctx, ids, true, ids)
}

// RunsByIDsSeriesOf is RunsByIDs attaching the monitor series of the runs
// series lists only (ids of runs among ids); the others' Monitor is nil,
// as a run without series has.
func (s *Store) RunsByIDsSeriesOf(ctx context.Context, ids, series []string) ([]*run.Run, error) {
	return s.runsByIDs(ctx, ids, true, series)
}

// HistoryRunsByIDs is RunsByIDs keeping of each document only what a
// comparison's noise history reads (compare's calibration and noise
// floor: id, probe, host, suite, parameters, placement, schema) beside
// the samples, and no monitor series (schema 8 keeps them apart, in
// run_series, so they are not even read): decoding whole documents,
// monitor series included, was half a cold two-host comparison's CPU
// (docs/performance.md).
func (s *Store) HistoryRunsByIDs(ctx context.Context, ids []string) ([]*run.Run, error) {
	return s.runsByIDs(ctx, ids, false, nil)
}

// historyDoc is the part of a run document decodeHistoryRun keeps.
type historyDoc struct {
	Schema int               `json:"schema"`
	ID     string            `json:"id"`
	Suite  string            `json:"suite"`
	Probe  string            `json:"probe"`
	Params map[string]string `json:"params"`
	CPUs   string            `json:"cpus"`
	Host   string            `json:"host"`
}

func decodeHistoryRun(id, doc string) (*run.Run, error) {
	var h historyDoc
	if err := json.Unmarshal([]byte(doc), &h); err != nil {
		return nil, fmt.Errorf("run %s: stored document is corrupt: %w", id, err)
	}
	if h.Schema > run.Schema {
		return nil, fmt.Errorf("run %s: %w: run schema %d", id, run.ErrNewerSchema, h.Schema)
	}
	return &run.Run{Schema: h.Schema, ID: h.ID, Suite: h.Suite, Probe: h.Probe, Params: h.Params, CPUs: h.CPUs, Host: h.Host}, nil
}

// runsByIDs reads the runs ids, whole or for a noise history, and the
// monitor series of the runs withSeries (of ids; only whole).
func (s *Store) runsByIDs(ctx context.Context, ids []string, whole bool, withSeries []string) ([]*run.Run, error) {
	read := readForHistory
	var series func() (map[string][]run.MonitorPoint, error)
	if whole {
		// The ids are known, so the series are read and decoded on a
		// connection of their own while the documents and samples are
		// (a third of a cold label comparison's time, serially).
		read = readNoSeries
		if len(withSeries) > 0 {
			series = s.seriesOf(ctx, withSeries)
		}
	}
	by := make(map[string]*run.Run, len(ids))
	var err error
	for start := 0; start < len(ids) && err == nil; start += sampleIDs {
		chunk := ids[start:min(start+sampleIDs, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var rs []*run.Run
		rs, err = s.loadRunsWith(ctx, `SELECT id, doc FROM runs WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+`)`, args, read)
		for _, r := range rs {
			by[r.ID] = r
		}
	}
	if series != nil {
		m, serr := series() // waited for even after an error: nothing is left reading
		if err == nil {
			err = serr
		}
		for id, pts := range m {
			if r := by[id]; r != nil {
				r.Monitor = pts
			}
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]*run.Run, 0, len(ids))
	for _, id := range ids {
		if r := by[id]; r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// refsPerQuery is how many probe and host pairs one NewestRefs query
// reads (a compound SELECT of one term per pair; SQLite allows 500).
const refsPerQuery = 100

// NewestRefs is, for each probe and host pair (probe first), its newest n
// runs as RunRefs lists them (newest first, ties by id bytewise), in the
// order of pairs: one query of one indexed range per pair instead of a
// query per pair.
func (s *Store) NewestRefs(ctx context.Context, pairs [][2]string, n int) ([][]RunRef, error) {
	return s.newestRefs(ctx, `probe = ? AND host = ?`, pairs, n)
}

// LabelProbeRefs is, for each probe, the newest n runs labelled label
// (RunRefs' order), in the order of probes: one compound query of an
// index range (runs (label, probe, started), schema 7) per probe. The
// console compares a label of a million runs by these.
func (s *Store) LabelProbeRefs(ctx context.Context, label string, probes []string, n int) ([][]RunRef, error) {
	pairs := make([][2]string, len(probes))
	for i, p := range probes {
		pairs[i] = [2]string{label, p}
	}
	return s.newestRefs(ctx, `label = ? AND probe = ?`, pairs, n)
}

// newestRefs is the newest n runs matching where (two placeholders) for
// each pair of arguments, in the order of pairs.
func (s *Store) newestRefs(ctx context.Context, where string, pairs [][2]string, n int) ([][]RunRef, error) {
	out := make([][]RunRef, len(pairs))
	for start := 0; start < len(pairs); start += refsPerQuery {
		part := pairs[start:min(start+refsPerQuery, len(pairs))]
		terms := make([]string, len(part))
		args := make([]any, 0, 2*len(part))
		for i, p := range part {
			terms[i] = fmt.Sprintf(`SELECT * FROM (SELECT %d AS k, %s FROM runs WHERE %s ORDER BY started DESC, %s LIMIT %d) t%d`,
				start+i, runRefsColumns, where, s.d.byteOrder("id"), max(n, 1), i)
			args = append(args, p[0], p[1])
		}
		rows, err := s.db.QueryContext(ctx, s.q(strings.Join(terms, " UNION ALL ")), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k int
			var r RunRef
			var at int64
			var complete int
			if err := rows.Scan(&k, &r.ID, &r.Label, &r.Suite, &r.Probe, &r.Host, &r.Snapshot, &at, &complete); err != nil {
				rows.Close()
				return nil, err
			}
			r.Started, r.Complete = time.Unix(0, at).UTC(), complete != 0
			out[k] = append(out[k], r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	for _, refs := range out { // a compound SELECT keeps no order of its own
		sort.Slice(refs, func(i, j int) bool {
			if !refs[i].Started.Equal(refs[j].Started) {
				return refs[i].Started.After(refs[j].Started)
			}
			return refs[i].ID < refs[j].ID
		})
	}
	return out, nil
}
