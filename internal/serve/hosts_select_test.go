package serve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/store"
)

// refSelect is the hosts page's selection as it was before the index
// kept a summary per host (every host's pairs read, ranked and sorted on
// each request): the reference selectHosts must equal. It returns the
// page's hosts, the count of matches, the probes and the pending pairs
// among the matches.
func refSelect(hosts []*hostEntry, d *hostsDoc, labelled map[string]bool) (page []string, total int, probes []string, pending int) {
	matches := func(h *hostEntry) bool {
		if d.Host != "" && !strings.Contains(strings.ToLower(h.Host), strings.ToLower(d.Host)) || labelled != nil && !labelled[h.Host] {
			return false
		}
		hasProbe, hasVerdict := d.Probe == "", d.Verdict == ""
		for _, pe := range h.Pairs {
			if d.Probe != "" && pe.Probe != d.Probe {
				continue
			}
			hasProbe = true
			if d.Verdict != "" && verdictOf(pe) == d.Verdict {
				hasVerdict = true
			}
		}
		return hasProbe && hasVerdict
	}
	seen := map[string]bool{}
	probes = []string{}
	type ranked struct {
		h *hostEntry
		r int
	}
	var match []ranked
	for _, h := range hosts {
		for _, pe := range h.Pairs {
			if !seen[pe.Probe] {
				seen[pe.Probe] = true
				probes = append(probes, pe.Probe)
			}
		}
		if matches(h) {
			match = append(match, ranked{h, rank(h)})
			for _, p := range h.Pairs {
				if !p.Done {
					pending++
				}
			}
		}
	}
	if d.Sort == "worst" {
		sort.SliceStable(match, func(i, j int) bool { return match[i].r > match[j].r })
	}
	sort.Strings(probes)
	for i := d.Page * d.Per; i < len(match) && i < (d.Page+1)*d.Per; i++ {
		page = append(page, match[i].h.Host)
	}
	return page, len(match), probes, pending
}

// randomIndex is an index of n hosts (names of mixed case) with a random
// subset of probes each, every pair pending, without an earlier run or
// with any verdict (host drift or not), and findings of any severity.
func randomIndex(rng *rand.Rand, n int) []*hostEntry {
	probes := []string{"cpu", "syscall", "memory.pagefault", "disk.fsync", "net.loopback"}
	verdicts := []compare.Verdict{compare.Worse, compare.Better, compare.Same, compare.Equivalent, compare.Inconclusive}
	severities := []string{"critical", "high", "medium", "low", "info"}
	hs := make([]*hostEntry, n)
	for i := range hs {
		name := fmt.Sprintf("node%03d", i)
		if i%3 == 0 {
			name = fmt.Sprintf("DB-%03d", i)
		}
		h := &hostEntry{Host: name, Snap: store.HostSnap{Host: name, ID: fmt.Sprint("s", i)}, Audited: rng.IntN(5) > 0}
		if h.Audited && rng.IntN(3) == 0 {
			h.Worst = severities[rng.IntN(len(severities))]
			h.Findings = map[string]int{h.Worst: 1}
		}
		for _, p := range probes {
			if rng.IntN(4) == 0 {
				continue
			}
			pe := &pairEntry{PairSig: store.PairSig{Probe: p, Host: name, Sig: "s"}}
			switch rng.IntN(6) {
			case 0: // pending
			case 1:
				pe.Done = true // no earlier run
			default:
				pe.Done = true
				pe.Drift = &drift{Probe: p, Verdict: verdicts[rng.IntN(len(verdicts))], HostDrift: rng.IntN(4) == 0}
			}
			h.Pairs = append(h.Pairs, pe)
		}
		hs[i] = h
	}
	slices.SortFunc(hs, func(a, b *hostEntry) int { return strings.Compare(a.Host, b.Host) })
	return hs
}

// The selection from the kept summaries is the one the hosts page made
// from the pairs themselves: the same hosts in the same order on every
// page, the same count, probes and pending count, for every filter
// (name in any case, label, probe — also one no host has —, verdict,
// both orders), also after pairs were computed and audits done the way
// fillPairs and fillAudit record them.
func TestSelectHostsAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 10000))
	s := &Server{}
	s.ix.mu.Lock()
	s.ix.setHosts(randomIndex(rng, 300))
	s.ix.mu.Unlock()
	filters := []hostsDoc{{}, {Host: "node0"}, {Host: "db-0"}, {Host: "NODE01"}, {Probe: "cpu"}, {Probe: "nosuch"}, {Probe: "disk.fsync", Verdict: "worse"},
		{Verdict: "pending"}, {Verdict: "none"}, {Verdict: "worse"}, {Verdict: "equivalent"}, {Probe: "syscall", Verdict: "pending"}, {Label: "x"}, {Label: "x", Probe: "cpu", Verdict: "better"}}
	check := func(round string) {
		t.Helper()
		s.ix.mu.Lock()
		hosts := slices.Clone(s.ix.hosts)
		s.ix.mu.Unlock()
		labelled := map[string]bool{}
		var names []string
		for i, h := range hosts {
			if i%4 != 1 {
				labelled[h.Host] = true
				names = append(names, h.Host)
			}
		}
		for _, f := range filters {
			for _, order := range []string{"worst", "name"} {
				for _, pp := range [][2]int{{0, 50}, {1, 50}, {2, 7}, {40, 7}, {0, 500}} {
					d, ref := f, f
					d.Sort, d.Page, d.Per = order, pp[0], pp[1]
					ref.Sort, ref.Page, ref.Per = order, pp[0], pp[1]
					var lab *labelSet
					var refLabel map[string]bool
					if f.Label != "" {
						// In byte order as the store gives them (merged),
						// or not (looked up).
						lab, refLabel = &labelSet{names: names}, labelled
						if pp[0] == 1 {
							lab.names = slices.Clone(names)
							slices.Reverse(lab.names)
						}
					}
					sel := s.selectHosts(&d, lab)
					var got []string
					for _, h := range sel.page {
						got = append(got, h.Host)
					}
					want, total, probes, pending := refSelect(hosts, &ref, refLabel)
					if !slices.Equal(got, want) || d.Total != total || !slices.Equal(d.Probes, probes) {
						t.Errorf("%s, %+v: page %v of %d (probes %v), want %v of %d (probes %v)", round, d, got, d.Total, d.Probes, want, total, probes)
					}
					if fill := pending > 0 && pending <= syncFill; fill != (sel.match != nil) || fill && len(sel.match) != total {
						t.Errorf("%s, %+v: %d matches to compute first, want them all (%d) iff 0 < %d pending <= %d", round, d, len(sel.match), total, pending, syncFill)
					}
				}
			}
		}
	}
	check("as built")
	// Compute pending pairs and audits as fillPairs and fillAudit do.
	s.ix.mu.Lock()
	for i, h := range s.ix.hosts {
		for _, p := range h.Pairs {
			if !p.Done && i%2 == 0 {
				p.Done, p.Drift = true, &drift{Probe: p.Probe, Verdict: compare.Worse}
				s.ix.summarize(h)
			}
		}
		if !h.Audited && i%3 == 0 {
			h.Audited, h.Worst, h.Findings = true, "critical", map[string]int{"critical": 1}
			s.ix.summarize(h)
		}
	}
	s.ix.mu.Unlock()
	check("after fills")
}

// checkSummaries: every entry's kept summary is the one its pairs and
// audit give now (fillPairs and fillAudit keep them).
func checkSummaries(t *testing.T, s *Server) {
	t.Helper()
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	for i, h := range s.ix.hosts {
		want := *h
		want.pv = nil
		s.ix.summarize(&want)
		if h.pos != i || h.rank != want.rank || h.npend != want.npend || !slices.Equal(h.pv, want.pv) || h.lower != strings.ToLower(h.Host) {
			t.Errorf("%s: kept summary pos %d rank %d pending %d %v, want %d %d %d %v", h.Host, h.pos, h.rank, h.npend, h.pv, i, want.rank, want.npend, want.pv)
		}
	}
}

// The label filter reads a label's hosts once per read of the store by
// the index: a host that gets a run of the label shows under it once the
// index has read the store again, as its runs do.
func TestLabelFilterFollowsIndexRead(t *testing.T) {
	path := smallStore(t)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	s := New(st, Config{Listen: "127.0.0.1:0"})
	h := s.Handler()
	var d hostsDoc
	getJSON(t, h, "/?format=json&label=late", &d)
	if d.Total != 0 {
		t.Fatalf("label=late before any run of it: %v", hostNamesOf(d))
	}
	runs, err := st.Runs(ctx, store.Filter{Host: "node03", Probe: "cpu", Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("newest cpu run of node03: %v", err)
	}
	late := *runs[0]
	late.ID, late.Label = "late-node03", "late"
	late.Started, late.Ended = late.Started.Add(time.Hour), late.Ended.Add(time.Hour)
	if err := st.SaveRun(ctx, &late, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.readAggregate(ctx); err != nil {
		t.Fatal(err)
	}
	getJSON(t, h, "/?format=json&label=late", &d)
	if got := hostNamesOf(d); !slices.Equal(got, []string{"node03"}) || d.Total != 1 {
		t.Errorf("label=late after the index read the store again: %v (total %d), want [node03]", got, d.Total)
	}
	checkSummaries(t, s)
}
