package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM runs`+where), args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	q := `SELECT id, label, suite, probe, host, snapshot_id, started, complete FROM runs` + where +
		` ORDER BY started DESC, ` + s.d.byteOrder("id") + fmt.Sprintf(` LIMIT %d OFFSET %d`, max(p.Limit, 1), max(p.Offset, 0))
	rows, err := s.db.QueryContext(ctx, s.q(q), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []RunRef
	for rows.Next() {
		var r RunRef
		var at int64
		var complete int
		if err := rows.Scan(&r.ID, &r.Label, &r.Suite, &r.Probe, &r.Host, &r.Snapshot, &at, &complete); err != nil {
			return nil, 0, err
		}
		r.Started, r.Complete = time.Unix(0, at).UTC(), complete != 0
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// RunsPage loads the runs of p (documents and samples), newest first.
func (s *Store) RunsPage(ctx context.Context, p Page) ([]*run.Run, error) {
	where, args := s.pageWhere(p)
	q := `SELECT id, doc FROM runs` + where + ` ORDER BY started DESC, ` + s.d.byteOrder("id") +
		fmt.Sprintf(` LIMIT %d OFFSET %d`, max(p.Limit, 1), max(p.Offset, 0))
	return s.loadRuns(ctx, q, args)
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
