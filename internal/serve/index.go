package serve

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/store"
)

// The host index: what the hosts page needs to find the bad hosts among
// ten thousand — every host, its probes, each probe's verdict (compare's,
// as driftOf decides it) and the audit of its newest snapshot — kept in
// memory so that a page sorts, filters and slices it without a query over
// the runs.
//
// Reading it from the store costs one aggregate query (a pass over a
// million runs takes about a second on PostgreSQL) and one comparison per
// probe and host (31 runs loaded and compared each), minutes for 20,000
// pairs on two cores. So the index is built in the background, refreshed
// when the store changes (a cheap count-and-newest check), and saved to a
// cache file keyed by the store, so a restarted console starts with the
// verdicts it had; an entry is reused only while its pair's signature (the
// number of runs, the sum of their start times and the newest run id) is
// unchanged, since stored runs never change. The hosts page computes
// whatever its own rows still lack before it answers, so every verdict
// shown is exact; only the order of hosts not yet reached can be
// incomplete, and the page says how much is.

// pairEntry is one probe on one host in the index.
type pairEntry struct {
	store.PairSig
	Done  bool   `json:"done"`  // Drift computed for this Sig
	Drift *drift `json:"drift"` // nil when the pair has no earlier run
}

// hostEntry is one host in the index.
type hostEntry struct {
	Host     string         `json:"host"`
	Runs     int            `json:"runs"`
	LastRun  time.Time      `json:"last_run"`
	Snap     store.HostSnap `json:"snap"`
	Pairs    []*pairEntry   `json:"pairs"`    // by probe
	Audited  bool           `json:"audited"`  // Summary/Findings for Snap.ID, workload general
	Summary  *snapSummary   `json:"summary"`  // of Snap
	Findings map[string]int `json:"findings"` // failing by severity (general)
	Worst    string         `json:"worst"`

	// What a page filters and orders by, kept by index.summarize whenever
	// the entry changes (replaced, a pair's verdict computed, the audit
	// done), so that a page reads a few words of each of 10,000 hosts
	// instead of following their 100,000 pairs (and hashing their probe
	// names) on every request. Not saved: derived.
	pos   int      // in index.hosts
	lower string   // Host in lower case, for the name filter
	rank  int      // rank(h)
	pv    []uint32 // per pair: probe number<<4 | verdictCode(verdictOf(pair))
	npend int      // pairs not computed
}

// index is the host index; mu guards every field and the entries.
type index struct {
	mu      sync.Mutex
	loaded  bool // the aggregate was read at least once (or the cache loaded)
	hosts   []*hostEntry
	byName  map[string]*hostEntry
	readAt  time.Time // when the aggregate was read
	pending int       // pairs and audits not yet computed
	err     error     // the last refresh's error

	building  bool
	serving   bool          // under Serve: the background build reads the aggregate too
	reading   chan struct{} // closed when the aggregate read in flight ends; nil when none
	readErr   error         // the last aggregate read's error
	pageFills int           // hosts pages' fills running (hosts.go)
	cache     string        // the cache file, "" for none

	// probes are the probes of every host, sorted; probeNum a probe's
	// number in it (hostEntry.pv). gen counts setHosts calls (a label's
	// hosts are cached per gen: hosts.go).
	probes   []string
	probeNum map[string]int
	gen      int
	labels   map[string]*labelSet // by label, of generation gen (hosts.go)
	recent   *recentLabels        // the compare form's labels (compare.go)
	sorted   bool                 // hosts are in byte order of their names (as read)
}

// indexCacheVersion changes when the entries' meaning does (the verdict
// rule, the drift window): a cache of another version is ignored.
const indexCacheVersion = 1

type indexFile struct {
	Version int          `json:"version"`
	Store   string       `json:"store"`
	ReadAt  time.Time    `json:"read_at"`
	Hosts   []*hostEntry `json:"hosts"`
}

// cachePath is the index's cache file for the store at path in dir.
func cachePath(dir, storePath string) string {
	if dir == "" {
		return ""
	}
	h := sha256.Sum256([]byte(storePath))
	return filepath.Join(dir, "console-index-"+hex.EncodeToString(h[:8])+".json")
}

// loadCache reads the cache file, if any, as the index's starting point.
func (ix *index) loadCache(storePath string) {
	if ix.cache == "" {
		return
	}
	b, err := os.ReadFile(ix.cache)
	if err != nil {
		return
	}
	var f indexFile
	if json.Unmarshal(b, &f) != nil || f.Version != indexCacheVersion || f.Store != storePath {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.loaded {
		return
	}
	ix.setHosts(f.Hosts)
	ix.readAt, ix.loaded = f.ReadAt, true
}

// saveCache writes the index atomically (a temp file renamed over it).
func (ix *index) saveCache(storePath string) {
	if ix.cache == "" {
		return
	}
	// Copied under the lock, encoded outside it: encoding 20,000 pairs
	// takes longer than a request may wait for the lock.
	ix.mu.Lock()
	f := indexFile{Version: indexCacheVersion, Store: storePath, ReadAt: ix.readAt, Hosts: make([]*hostEntry, len(ix.hosts))}
	for i, h := range ix.hosts {
		c := *h
		c.Pairs = make([]*pairEntry, len(h.Pairs))
		for j, p := range h.Pairs {
			pc := *p
			c.Pairs[j] = &pc
		}
		f.Hosts[i] = &c
	}
	ix.mu.Unlock()
	b, err := json.Marshal(f)
	if err != nil || os.MkdirAll(filepath.Dir(ix.cache), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(ix.cache), ".console-index-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), ix.cache) != nil {
		os.Remove(tmp.Name())
	}
}

// setHosts replaces the entries; mu held.
func (ix *index) setHosts(hs []*hostEntry) {
	ix.hosts = hs
	ix.byName = make(map[string]*hostEntry, len(hs))
	ix.pending = 0
	ix.gen++
	ix.labels = nil
	ix.probes, ix.probeNum = nil, map[string]int{}
	for _, h := range hs {
		ix.byName[h.Host] = h
		for _, p := range h.Pairs {
			if !p.Done {
				ix.pending++
			}
			if _, ok := ix.probeNum[p.Probe]; !ok {
				ix.probeNum[p.Probe] = 0
				ix.probes = append(ix.probes, p.Probe)
			}
		}
		if !h.Audited && h.Snap.ID != "" {
			ix.pending++
		}
	}
	sort.Strings(ix.probes)
	for i, p := range ix.probes {
		ix.probeNum[p] = i
	}
	ix.sorted = true
	for i, h := range hs {
		h.pos, h.lower = i, strings.ToLower(h.Host)
		ix.summarize(h)
		ix.sorted = ix.sorted && (i == 0 || hs[i-1].Host < h.Host)
	}
}

// summarize sets what a page filters and orders h by from its pairs and
// audit; mu held, h one of the entries.
func (ix *index) summarize(h *hostEntry) {
	h.rank, h.npend, h.pv = min(rank(h), maxRank), 0, h.pv[:0]
	for _, p := range h.Pairs {
		if !p.Done {
			h.npend++
		}
		h.pv = append(h.pv, uint32(ix.probeNum[p.Probe])<<4|verdictCode(verdictOf(p)))
	}
}

// verdictCode is a verdict's number in verdictFilters, or noVerdict.
func verdictCode(v string) uint32 {
	if i := slices.Index(verdictFilters, v); i >= 0 {
		return uint32(i)
	}
	return noVerdict
}

// noVerdict is verdictCode's number for a verdict no filter names.
const noVerdict = 15

// readAggregate reads the store's pairs and snapshots and merges them
// with the entries already computed (kept where the signature and the
// snapshot are the same).
func (s *Server) readAggregate(ctx context.Context) error {
	ix := &s.ix
	done := make(chan struct{})
	ix.mu.Lock()
	ix.reading = done
	ix.mu.Unlock()
	defer func() {
		ix.mu.Lock()
		if ix.reading == done {
			ix.reading = nil
		}
		ix.mu.Unlock()
		close(done)
	}()
	pairs, snaps, err := s.st.ConsoleIndex(ctx)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.readErr = err; err != nil {
		return err
	}
	old := ix.byName
	byName := map[string]*hostEntry{}
	var hs []*hostEntry
	for _, p := range pairs {
		h := byName[p.Host]
		if h == nil {
			h = &hostEntry{Host: p.Host}
			byName[p.Host] = h
			hs = append(hs, h)
		}
		h.Runs += p.Runs
		if p.NewestAt.After(h.LastRun) {
			h.LastRun = p.NewestAt
		}
		pe := &pairEntry{PairSig: p}
		if o := old[p.Host]; o != nil {
			for _, op := range o.Pairs {
				if op.Probe == p.Probe && op.Sig == p.Sig && op.Done {
					pe.Done, pe.Drift = true, op.Drift
				}
			}
		}
		h.Pairs = append(h.Pairs, pe)
	}
	for _, sn := range snaps {
		h := byName[sn.Host]
		if h == nil {
			continue // a snapshot without runs (a peer's) is no host of the page
		}
		h.Snap = sn
		if o := old[sn.Host]; o != nil && o.Audited && o.Snap.ID == sn.ID {
			h.Audited, h.Summary, h.Findings, h.Worst = true, o.Summary, o.Findings, o.Worst
		}
	}
	for _, h := range hs {
		sort.Slice(h.Pairs, func(i, j int) bool { return h.Pairs[i].Probe < h.Pairs[j].Probe })
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Host < hs[j].Host })
	ix.setHosts(hs)
	ix.readAt, ix.loaded, ix.err = time.Now().UTC(), true, nil
	return nil
}

// ensureLoaded reads the aggregate now if the index has none yet.
func (s *Server) ensureLoaded(ctx context.Context) error {
	s.ix.mu.Lock()
	loaded := s.ix.loaded
	s.ix.mu.Unlock()
	if loaded {
		return nil
	}
	return s.readAggregate(ctx)
}

// loadedBy is ensureLoaded for the hosts page of a console under Serve,
// whose first start reads the aggregate in the background (a pass over
// every run: a second on a million): the page waits for that read until
// deadline, and reports false when it has not ended by then (the page
// then says the index is being read). Outside Serve (tests, benchmarks)
// it is ensureLoaded.
func (s *Server) loadedBy(ctx context.Context, deadline time.Time) (bool, error) {
	s.ix.mu.Lock()
	loaded, serving, reading, failed := s.ix.loaded, s.ix.serving, s.ix.reading, s.ix.readErr != nil
	s.ix.mu.Unlock()
	switch {
	case loaded:
		return true, nil
	case !serving:
		return true, s.ensureLoaded(ctx)
	case reading == nil && !failed:
		// The build is about to read (after the store's signature): a
		// second read beside it would slow both.
		reading = make(chan struct{})
		go func() {
			defer close(reading)
			for {
				s.ix.mu.Lock()
				r, done := s.ix.reading, s.ix.loaded || s.ix.readErr != nil
				s.ix.mu.Unlock()
				if r != nil {
					<-r
					return
				}
				if done || ctx.Err() != nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	case reading == nil:
		// The last read failed: this request reads again, and the next
		// requests wait for its read.
		reading = make(chan struct{})
		go func() {
			defer close(reading)
			if err := s.readAggregate(context.WithoutCancel(ctx)); err != nil {
				s.log.Printf("hosts page: reading the index: %v", err)
			}
		}()
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-reading:
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	if !s.ix.loaded {
		return false, s.ix.readErr
	}
	return true, nil
}

// pairJob is one pair of a host to compute.
type pairJob struct {
	host string
	p    *pairEntry
}

// fillPairs computes the drifts of pairs (their runs read together,
// outside the lock) and stores each in the index's current entry for the
// same host, probe and signature. An entry may have been replaced by a
// later read of the aggregate (a request's read racing the background
// build's, or a refresh): the result belongs to whichever entry the index
// holds now, else the page would keep a replaced entry's verdict, the
// index's entry would stay pending forever and the pending count would go
// negative. Pairs computed meanwhile (by a page, or the build) are skipped.
func (s *Server) fillPairs(ctx context.Context, jobs []pairJob) error {
	type want struct{ host, probe, sig string }
	var ws []want
	var phs []store.ProbeHost
	s.ix.mu.Lock()
	for _, j := range jobs {
		cur := s.ix.pairOf(j.host, j.p.Probe, j.p.Sig)
		if cur == nil || cur.Done {
			continue
		}
		ws = append(ws, want{j.host, cur.Probe, cur.Sig})
		phs = append(phs, store.ProbeHost{Probe: cur.Probe, Host: j.host, Runs: cur.Runs, Newest: cur.Newest})
	}
	s.ix.mu.Unlock()
	if len(phs) == 0 {
		return nil
	}
	ds, errs, err := s.driftsOf(ctx, phs)
	if err != nil {
		return err
	}
	s.ix.mu.Lock()
	for i, w := range ws {
		if errs[i] != nil {
			err = cmp.Or(err, errs[i]) // the pair stays pending; the others are kept
			continue
		}
		if cur := s.ix.pairOf(w.host, w.probe, w.sig); cur != nil && !cur.Done {
			cur.Done, cur.Drift = true, ds[i]
			s.ix.pending--
			s.ix.summarize(s.ix.byName[w.host])
		}
	}
	s.ix.mu.Unlock()
	return err
}

// pairOf is the index's current entry of a host's probe with signature
// sig, nil when the index no longer has it; mu held.
func (ix *index) pairOf(host, probe, sig string) *pairEntry {
	h := ix.byName[host]
	if h == nil {
		return nil
	}
	for _, p := range h.Pairs {
		if p.Probe == probe && p.Sig == sig {
			return p
		}
	}
	return nil
}

// fillAudit audits a host's newest snapshot for the general workload, and
// stores the result in the index's current entry of the host (as
// fillPair does).
func (s *Server) fillAudit(ctx context.Context, h *hostEntry) {
	s.ix.mu.Lock()
	host, id := h.Host, h.Snap.ID
	cur := s.ix.byName[host]
	done := cur == nil || cur.Audited || cur.Snap.ID != id
	s.ix.mu.Unlock()
	if done || id == "" {
		return
	}
	a, ok := s.snapAudit(ctx, id, generalWorkload())
	s.ix.mu.Lock()
	if cur := s.ix.byName[host]; cur != nil && !cur.Audited && cur.Snap.ID == id {
		cur.Audited = true
		if ok {
			cur.Summary, cur.Findings, cur.Worst = a.summary, a.sum.FailBySeverity, a.sum.Worst
		}
		s.ix.pending--
		s.ix.summarize(cur)
	}
	s.ix.mu.Unlock()
}

func generalWorkload() *audit.Workload {
	w, _ := audit.LookupWorkload("general")
	return w
}

// fillHosts computes what the given hosts lack, with at most workers
// chunks of pairs (or audits) at once. A chunk is at most
// store.PairRunsMost pairs whose runs one query reads; fewer when that
// would leave a worker idle (a page's 100 pairs are two chunks of 50 on
// two workers, not one of 64 and one of 36).
func (s *Server) fillHosts(ctx context.Context, hs []*hostEntry, workers int) error {
	type job struct {
		h     *hostEntry // audit h
		pairs []pairJob
	}
	var todo []pairJob
	s.ix.mu.Lock()
	for _, h := range hs {
		for _, p := range h.Pairs {
			if !p.Done {
				todo = append(todo, pairJob{h.Host, p})
			}
		}
	}
	s.ix.mu.Unlock()
	chunk := min(store.PairRunsMost, max(1, (len(todo)+workers-1)/workers))
	jobs := make(chan job)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if j.h != nil {
					s.fillAudit(ctx, j.h)
					continue
				}
				if err := s.fillPairs(ctx, j.pairs); err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			}
		}()
	}
	// The pairs in host order, each chunk followed by the audits of its
	// hosts: a console restarted half-way keeps whole hosts.
	next := 0
	for start := 0; start < len(todo) && ctx.Err() == nil; start += chunk {
		part := todo[start:min(start+chunk, len(todo))]
		jobs <- job{pairs: part}
		for ; next < len(hs) && (start+chunk >= len(todo) || hs[next].Host != part[len(part)-1].host); next++ {
			jobs <- job{h: hs[next]}
		}
	}
	for ; next < len(hs) && ctx.Err() == nil; next++ {
		jobs <- job{h: hs[next]}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return ctx.Err()
	}
}

// build reads the aggregate and computes every pending entry in the
// background, once at a time; the cache is saved when it is done.
func (s *Server) build(ctx context.Context) {
	s.ix.mu.Lock()
	if s.ix.building {
		s.ix.mu.Unlock()
		return
	}
	s.ix.building = true
	s.ix.mu.Unlock()
	defer func() {
		s.ix.mu.Lock()
		s.ix.building = false
		s.ix.mu.Unlock()
	}()
	err := s.readAggregate(ctx)
	if err == nil {
		s.ix.mu.Lock()
		hs, pending := s.ix.hosts, s.ix.pending
		s.ix.mu.Unlock()
		// One worker per two CPUs: the index is background work and must
		// leave the requests (and PostgreSQL) a CPU. Except for a first
		// build (no cache, or one cut short: most pairs pending): until
		// it ends the hosts page lacks most verdicts and orders by the
		// few it has, so it gets every CPU (the pages still answer in
		// pageWait plus their own work). The CPU is decoding the runs'
		// documents (about two thirds) and compare (a quarter): the
		// database's part is small once a query reads 64 pairs' runs.
		// What is computed is saved every saveEvery, so a console
		// restarted half-way keeps it.
		workers := max(1, runtime.NumCPU()/2)
		if pending > firstBuild {
			workers = max(1, runtime.NumCPU())
		}
		saved := make(chan struct{})
		go func() {
			t := time.NewTicker(saveEvery)
			defer t.Stop()
			for {
				select {
				case <-saved:
					return
				case <-t.C:
					s.saveCache(s.st.Path)
				}
			}
		}()
		err = s.fillHosts(ctx, hs, workers)
		close(saved)
	}
	s.ix.mu.Lock()
	s.ix.err = err
	s.ix.mu.Unlock()
	s.saveCache(s.st.Path)
}

func (s *Server) saveCache(path string) { s.ix.saveCache(path) }

// firstBuild is how many pending entries make a build a first one (on
// every CPU): more than a refresh after new runs of a fleet usually has.
const firstBuild = 1000

// saveEvery is how often a building index is saved to its cache file.
const saveEvery = 30 * time.Second

// cacheGrace is how long a console started from its cache file waits
// before it reads the store again.
const cacheGrace = 5 * time.Second

// refreshEvery is how often Serve checks the store for new runs.
const refreshEvery = 30 * time.Second

// maintain keeps the index current while the server runs: builds (from
// the cache Serve loaded, if any), and rebuilds when the store's signature (run count and
// newest start) changes.
func (s *Server) maintain(ctx context.Context) {
	s.ix.mu.Lock()
	cached := s.ix.loaded
	s.ix.mu.Unlock()
	if cached {
		// Started from the cache file: the first requests of a restarted
		// console are served from it before the store is read again.
		select {
		case <-ctx.Done():
			return
		case <-time.After(cacheGrace):
		}
	}
	last, _ := s.st.StoreSig(ctx)
	s.build(ctx)
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sig, err := s.st.StoreSig(ctx)
		if err != nil || sig == last {
			continue
		}
		last = sig
		s.build(ctx)
	}
}

// indexState is what the hosts page says about the index.
type indexState struct {
	// Loaded: the store's hosts were read (a console's first start on a
	// large store reads them for about a second; until then the page
	// has no hosts and says so).
	Loaded   bool      `json:"loaded"`
	Hosts    int       `json:"hosts"`
	Pending  int       `json:"pending"` // verdicts and audits not computed yet (the order may change)
	ReadAt   time.Time `json:"read_at"` // the store as of this time
	Building bool      `json:"building"`
}

func (s *Server) indexState() indexState {
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	return indexState{Loaded: s.ix.loaded, Hosts: len(s.ix.hosts), Pending: s.ix.pending, ReadAt: s.ix.readAt, Building: s.ix.building}
}

// hostNames is every indexed host's name, for the selections of other
// views (at most most, by name).
func (s *Server) hostNames(ctx context.Context, most int) ([]store.HostSummary, error) {
	if err := s.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	out := make([]store.HostSummary, 0, min(most, len(s.ix.hosts)))
	for _, h := range s.ix.hosts {
		if len(out) == most {
			break
		}
		out = append(out, store.HostSummary{Host: h.Host, Runs: h.Runs, LastRun: h.LastRun, Snapshot: h.Snap.ID, SnapAt: h.Snap.TakenAt})
	}
	return out, nil
}

// probeHosts is, for the history view's selection, one pair per probe
// (so every probe is offered) and up to most pairs of probe (so its hosts
// are), by probe and host.
func (s *Server) probeHosts(ctx context.Context, probe string, most int) ([]store.ProbeHost, error) {
	if err := s.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	var out []store.ProbeHost
	seen := map[string]bool{}
	n := 0
	for _, h := range s.ix.hosts {
		for _, p := range h.Pairs {
			mine := probe != "" && p.Probe == probe && n < most
			if !mine && seen[p.Probe] {
				continue
			}
			if mine {
				n++
			}
			seen[p.Probe] = true
			out = append(out, store.ProbeHost{Probe: p.Probe, Host: h.Host, Runs: p.Runs, Newest: p.Newest})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Probe < out[j].Probe })
	return out, nil
}

// verdictOf is a pair's verdict for sorting and filtering; "pending" when
// not computed, "none" without an earlier run.
func verdictOf(p *pairEntry) string {
	switch {
	case !p.Done:
		return "pending"
	case p.Drift == nil:
		return "none"
	}
	return string(p.Drift.Verdict)
}

// rank orders hosts worst first: a worse verdict the host's own drift does
// not explain, then a worse one it does (host drift), then a pending
// verdict, then failing findings by severity, then the rest.
func rank(h *hostEntry) int {
	r := 0
	for _, p := range h.Pairs {
		switch {
		case p.Done && p.Drift != nil && p.Drift.Verdict == compare.Worse && !p.Drift.HostDrift:
			r = max(r, 50)
		case p.Done && p.Drift != nil && p.Drift.Verdict == compare.Worse:
			r = max(r, 40)
		case !p.Done:
			r = max(r, 30)
		}
	}
	if r == 0 && h.Findings != nil {
		r = severityRank[h.Worst]
	}
	return r
}

// severityRank orders hosts without a worse or pending verdict by their
// worst failing finding.
var severityRank = map[string]int{"critical": 20, "high": 15, "medium": 10, "low": 5}
