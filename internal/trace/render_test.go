package trace

import (
	"encoding/json"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/bpf"
	"github.com/perflab/perflab/internal/golden"
)

// jsonGolden keeps the JSON of a report (the type's own encoding; report
// renders text and md from these files).
func jsonGolden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", name+".golden"), append(b, '\n'))
}

func fixtureRetrans() *RetransReport { return fixtureRetransPID(0) }

func fixtureRetransPID(pid int) *RetransReport {
	t0 := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	c := &retransCollector{o: RetransOptions{MaxEvents: 3, PID: pid}, owners: &sockOwners{byIno: map[uint64]owner{
		11: {4242, "nginx"}, 12: {777, "sshd"}}, seenMiss: map[uint64]bool{}, lastScan: time.Now().Add(time.Hour)}, flows: map[flowKey]*Flow{}}
	ev := func(ino uint64, sport, dport uint16, segs uint16, kind uint8, err int16, state uint8, at time.Duration) {
		e := &bpf.RetransRetransEvent{TsNs: uint64(at), SockIno: ino, Family: 2, Sport: sport, Dport: dport, Segs: segs, Kind: kind, Err: err, State: state}
		copy(e.Saddr[:], []byte{10, 0, 0, 1})
		copy(e.Daddr[:], []byte{10, 0, 0, 2})
		c.add(e, t0)
	}
	ev(11, 443, 51000, 1, 1, 0, 1, time.Millisecond)
	ev(11, 443, 51000, 3, 1, 0, 1, 2*time.Millisecond)
	ev(11, 443, 51000, 1, 1, -16, 1, 3*time.Millisecond)   // EBUSY: not sent, not counted
	ev(11, 443, 51000, 2, 1, -1, 1, 3500*time.Microsecond) // EPERM: netfilter dropped it, counted
	ev(12, 22, 60000, 1, 1, 0, 1, 4*time.Millisecond)
	ev(12, 22, 60000, 0, 2, 0, 1, 5*time.Millisecond) // tail-loss probe
	ev(99, 8080, 40000, 2, 1, 0, 4, 6*time.Millisecond)
	r := c.report(2 * time.Second)
	v := 7.0
	r.CounterSegs = &v
	return r
}

func TestRetransSummary(t *testing.T) {
	r := fixtureRetrans()
	if r.Retrans != 5 || r.Segs != 9 || r.TLP != 1 || r.Failed != 1 || r.LocalDrops != 1 {
		t.Fatalf("totals %d retrans, %d segs, %d TLP, %d failed, %d local drops; want 5, 9, 1, 1, 1", r.Retrans, r.Segs, r.TLP, r.Failed, r.LocalDrops)
	}
	top := r.Flows[0]
	if top.PID != 4242 || top.Src != netip.MustParseAddrPort("10.0.0.1:443") || top.Segs != 6 || top.SharePct < 66.6 || top.SharePct > 66.7 || top.PerSec != 1.5 {
		t.Errorf("top flow %+v, want nginx 10.0.0.1:443 with 6 of 9 segments at 1.5/s", top)
	}
	if r.Flows[1].PID != 0 || r.Flows[1].State != "FIN_WAIT1" {
		t.Errorf("unowned flow %+v", r.Flows[1])
	}
	if len(r.Events) != 3 || r.Truncated != 3 || !r.Events[2].LocalDrop {
		t.Errorf("%d events kept (%+v), %d not listed; want 3 (the third dropped locally) and 3", len(r.Events), r.Events, r.Truncated)
	}
}

func TestRetransRender(t *testing.T) {
	r := fixtureRetrans()
	jsonGolden(t, "retrans.json", r)
}

func TestCacheCounts(t *testing.T) {
	c := raw{accessed: 100, added: 3, addedPages: 40, dirtied: 5}.counts(true)
	if c.Hits != 60 || c.Misses != 40 || *c.RatioPct != 60 {
		t.Errorf("pages: %+v", c)
	}
	c = raw{accessed: 100, added: 3, addedPages: 40}.counts(false)
	if c.Hits != 97 || c.Misses != 3 {
		t.Errorf("folios: %+v", c)
	}
	// Readahead can insert more than was asked for: no negative hits.
	c = raw{accessed: 10, addedPages: 64}.counts(true)
	if c.Hits != 0 || *c.RatioPct != 0 {
		t.Errorf("readahead: %+v", c)
	}
	if c := (raw{}).counts(true); c.RatioPct != nil {
		t.Errorf("no accesses must have no ratio, got %v", *c.RatioPct)
	}
}

func TestCacheRender(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	r := &CacheReport{Probes: "tracepoints", Unit: "pages", Seconds: 2,
		Intervals: []CacheInterval{
			{Time: t0, CacheCounts: raw{accessed: 65536, addedPages: 65536}.counts(true), PgpginPages: 65540},
			{Time: t0.Add(time.Second), CacheCounts: raw{accessed: 65536}.counts(true)},
		},
		Total:   CacheInterval{Time: t0.Add(2 * time.Second), CacheCounts: raw{accessed: 131072, addedPages: 65536}.counts(true), PgpginPages: 65540},
		Cgroups: []CacheGroup{{Name: "/system.slice/app.service", CacheCounts: raw{accessed: 131072, addedPages: 65536}.counts(true)}},
		Files:   []CacheGroup{{Name: "/data/big.dat", CacheCounts: raw{accessed: 131072, addedPages: 65536}.counts(true)}},
		Notes:   []string{"example note"},
	}
	jsonGolden(t, "cachestat.json", r)
}

func TestParseMapsAndLookup(t *testing.T) {
	m := parseMaps(`00400000-0047e000 r-xp 00000000 fe:00 123 /usr/bin/app
0047e000-00500000 r--p 0007e000 fe:00 123 /usr/bin/app
7f0000000000-7f0000021000 rw-p 00000000 00:00 0 
7f1000000000-7f1000100000 r-xp 00028000 fe:00 456 /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
`)
	if len(m) != 2 || m[0].path != "/usr/bin/app" || m[1].off != 0x28000 || m[1].start != 0x7f1000000000 {
		t.Fatalf("parsed %+v", m)
	}
	st := symtab{{0x1000, "a"}, {0x2000, "b"}}
	for a, want := range map[uint64]string{0x1000: "a", 0x1fff: "a", 0x2000: "b", 0x999999: "b"} {
		if got, _ := st.lookup(a); got != want {
			t.Errorf("lookup %#x = %q, want %q", a, got, want)
		}
	}
	if _, ok := st.lookup(0xfff); ok {
		t.Error("address below the first symbol resolved")
	}
}

func FuzzParseMaps(f *testing.F) {
	f.Add("00400000-0047e000 r-xp 00000000 fe:00 123 /usr/bin/app\n")
	f.Add("zz-yy r-xp 0 0 0 /x\n-\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range parseMaps(s) {
			if m.path == "" || m.path[0] != '/' {
				t.Fatalf("mapping without a file: %+v", m)
			}
		}
	})
}

func TestKernelStackDropsTracerFrames(t *testing.T) {
	for n, want := range map[string]bool{"bpf_trace_run4": true, "__bpf_trace_sched_switch": true, "__traceiter_sched_switch": true, "__schedule": false, "schedule": false} {
		if isTracerFrame(n) != want {
			t.Errorf("isTracerFrame(%q) = %v", n, !want)
		}
	}
}

func TestRetransPIDFilter(t *testing.T) {
	r := fixtureRetransPID(4242)
	if len(r.Flows) != 1 || r.Flows[0].Comm != "nginx" || r.Segs != 6 || r.Flows[0].SharePct != 100 {
		t.Errorf("--pid 4242 kept %+v (segments %d), want only nginx's flow", r.Flows, r.Segs)
	}
}
