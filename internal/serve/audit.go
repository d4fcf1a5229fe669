package serve

import (
	"context"
	"errors"
	"net/url"
	"sort"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// maxListedHosts is how many hosts (by name) a view's selection lists;
// any other host is named in the URL (host=), as the hosts page links it.
const maxListedHosts = 500

// maxSnapshots is how many of a host's snapshots the selection lists.
const maxSnapshots = 50

type auditDoc struct {
	Host      string              `json:"host"`
	Snapshot  string              `json:"snapshot_id"`
	Workload  string              `json:"workload"`
	Hosts     []store.HostSummary `json:"hosts"`
	Snapshots []store.SnapshotRef `json:"snapshots"`
	Summary   *audit.Summary      `json:"summary,omitempty"`
	Findings  []audit.Finding     `json:"findings"` // failing first, by severity
}

// audit evaluates the rule catalogue on a stored snapshot: the host's
// newest, or snapshot= by id.
func (s *Server) audit(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "host", "snapshot", "workload")
	d := auditDoc{Host: p.str("host"), Snapshot: p.str("snapshot"), Workload: p.str("workload"), Findings: []audit.Finding{}}
	if p.err != nil {
		return nil, p.err
	}
	w, err := workload(d.Workload)
	if err != nil {
		return nil, err
	}
	d.Workload = w.Name
	if d.Hosts, err = s.hostNames(ctx, maxListedHosts); err != nil {
		return nil, err
	}
	res := &result{View: "audit", Title: "perflab: audit", Data: &d}
	if d.Host == "" && d.Snapshot == "" {
		return res, nil
	}
	if d.Snapshot == "" {
		if d.Snapshots, err = s.st.SnapshotsOf(ctx, d.Host, maxSnapshots); err != nil {
			return nil, err
		}
		if len(d.Snapshots) == 0 {
			return nil, &notFound{"no snapshot of host " + d.Host}
		}
		d.Snapshot = d.Snapshots[0].ID
	}
	snap, err := s.snapshot(ctx, d.Snapshot)
	if err != nil {
		return nil, err
	}
	d.Snapshot, d.Host = snap.ID, snap.Host.Hostname
	if d.Snapshots == nil {
		if d.Snapshots, err = s.st.SnapshotsOf(ctx, d.Host, maxSnapshots); err != nil {
			return nil, err
		}
	}
	fs := audit.Run(snap, w)
	sum := audit.Summarize(fs)
	d.Summary = &sum
	sort.SliceStable(fs, func(i, j int) bool {
		fi, fj := fs[i].Status == audit.Fail, fs[j].Status == audit.Fail
		if fi != fj {
			return fi
		}
		return fs[i].Severity > fs[j].Severity
	})
	d.Findings = fs
	res.Title = "perflab audit: " + d.Host + " (" + w.Name + ")"
	return res, nil
}

func (s *Server) snapshot(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	snap, err := s.st.Snapshot(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, &notFound{"no snapshot " + id}
	case errors.Is(err, store.ErrAmbiguous):
		return nil, badf("%v", err)
	}
	return snap, err
}

type snapDiffDoc struct {
	Host      string              `json:"host"`
	A         string              `json:"a"`
	B         string              `json:"b"`
	Hosts     []store.HostSummary `json:"hosts"`
	Snapshots []store.SnapshotRef `json:"snapshots"`
	Diffs     []compare.Diff      `json:"diffs"`
}

// snapshots diffs two stored snapshots (a=, b=), by default the two
// newest of host=.
func (s *Server) snapshots(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "host", "a", "b")
	d := snapDiffDoc{Host: p.str("host"), A: p.str("a"), B: p.str("b"), Diffs: []compare.Diff{}}
	if p.err != nil {
		return nil, p.err
	}
	var err error
	if d.Hosts, err = s.hostNames(ctx, maxListedHosts); err != nil {
		return nil, err
	}
	res := &result{View: "snapshots", Title: "perflab: snapshot diff", Data: &d}
	if d.Host != "" {
		if d.Snapshots, err = s.st.SnapshotsOf(ctx, d.Host, maxSnapshots); err != nil {
			return nil, err
		}
		if d.A == "" && d.B == "" && len(d.Snapshots) >= 2 {
			d.A, d.B = d.Snapshots[1].ID, d.Snapshots[0].ID
		}
	}
	if d.A == "" || d.B == "" {
		return res, nil
	}
	a, err := s.snapshot(ctx, d.A)
	if err != nil {
		return nil, err
	}
	b, err := s.snapshot(ctx, d.B)
	if err != nil {
		return nil, err
	}
	d.A, d.B = a.ID, b.ID
	d.Diffs = append(d.Diffs, compare.DiffSnapshots(a, b)...)
	res.Title = "perflab: snapshot " + short(a.ID) + " → " + short(b.ID)
	return res, nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

type runsDoc struct {
	Filter store.Filter `json:"filter"`
	Page   int          `json:"page"`
	Per    int          `json:"per_page"`
	Total  int          `json:"total"`
	// More: more than Total runs match (counting stops at maxCounted).
	More bool           `json:"more,omitempty"`
	Runs []store.RunRef `json:"runs"`
}

// maxCounted is where the runs view stops counting: a count over a
// million runs costs more than the page may take.
const maxCounted = 10000

// runs lists stored runs, newest first, a page at a time.
func (s *Server) runs(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "host", "probe", "label", "page", "per")
	d := runsDoc{Filter: store.Filter{Host: p.str("host"), Probe: p.probe("probe"), Label: p.str("label")},
		Page: p.int("page", 0, 1<<20), Per: p.int("per", 50, maxPageRuns)}
	if d.Per == 0 && q.Get("per") != "" {
		p.fail(badf("per=0: want a page size from 1 to %d", maxPageRuns))
	}
	if d.Page*max(d.Per, 1) > maxCounted {
		p.fail(badf("page=%d: pages reach back %d runs at most; narrow the selection with host=, probe= or label=", d.Page, maxCounted))
	}
	if p.err != nil {
		return nil, p.err
	}
	d.Filter.Limit = max(d.Per, 1)
	var err error
	d.Runs, d.Total, err = s.st.RunRefs(ctx, store.Page{Filter: d.Filter, Offset: d.Page * d.Filter.Limit, CountMost: maxCounted})
	if err != nil {
		return nil, err
	}
	if d.Total > maxCounted {
		d.Total, d.More = maxCounted, true
	}
	if d.Runs == nil {
		d.Runs = []store.RunRef{}
	}
	return &result{View: "runs", Title: "perflab: runs", Data: &d}, nil
}
