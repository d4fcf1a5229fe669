package audit

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// roots are the hosts the end-to-end tests audit: the fixture trees, read in
// place (collection only reads), and the machine running the tests.
func roots(t *testing.T) map[string]hostfs.FS {
	t.Helper()
	out := map[string]hostfs.FS{}
	for _, name := range fixture.Names() {
		fs, err := hostfs.New(fixture.Dir(name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = fs
	}
	live, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	out["live"] = live
	return out
}

// A snapshot written to JSON and read back (as `perflab audit --snapshot`
// does with a file from another host) must audit exactly as the snapshot it
// came from, for every workload and trust setting.
func TestSnapshotFileAuditsLikeLive(t *testing.T) {
	for name, fs := range roots(t) {
		s, err := snapshot.Collect(fs, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := snapshot.Unmarshal(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		eachWorkloadPair(func(wname string, trusted bool, w1, w2 *Workload) {
			sameFindings(t, fmt.Sprintf("%s/%s trusted=%v", name, wname, trusted), Run(s, w1), Run(back, w2), "live", "file")
		})
	}
}

// No rule may fail to decide on a real host or on the fixture trees: error
// is for a rule that truly cannot decide, and none of these hosts is such a
// case.
func TestAuditHasNoErrors(t *testing.T) {
	for name, fs := range roots(t) {
		s, err := snapshot.Collect(fs, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, wname := range Workloads() {
			for _, trusted := range []bool{false, true} {
				w, _ := LookupWorkload(wname)
				w.Trusted = trusted
				fs := Run(s, w)
				if len(fs) != len(Rules()) {
					t.Errorf("%s/%s: %d findings for %d rules", name, wname, len(fs), len(Rules()))
				}
				for _, f := range fs {
					if f.Status == Error {
						t.Errorf("%s/%s trusted=%v: %s error: %s", name, wname, trusted, f.Rule, f.Reason)
					}
				}
			}
		}
	}
}

// Every rule's metadata is complete enough for docs/rules.md and the
// finding: an ID in AREA-NAME form, a title, a known area, a why with a
// number in it, and a source.
func TestRuleMetadata(t *testing.T) {
	areas := map[string]bool{"cpu": true, "power": true, "memory": true, "kernel": true, "security": true, "net": true,
		"irq": true, "block": true, "fs": true, "cgroup": true, "limits": true, "process": true, "virt": true, "container": true}
	known := map[string]bool{}
	for _, w := range Workloads() {
		known[w] = true
	}
	if n := len(Rules()); n < 50 {
		t.Errorf("catalogue has %d rules, want at least 50", n)
	}
	for _, r := range Rules() {
		if !idRE.MatchString(r.ID) {
			t.Errorf("%s: ID not in AREA-NAME form", r.ID)
		}
		if r.Title == "" || r.Source == "" || !areas[r.Area] {
			t.Errorf("%s: title %q, source %q, area %q", r.ID, r.Title, r.Source, r.Area)
		}
		if !digitRE.MatchString(r.Why) {
			t.Errorf("%s: why has no number: %q", r.ID, r.Why)
		}
		for _, w := range r.Workloads {
			if !known[w] {
				t.Errorf("%s: unknown workload %q", r.ID, w)
			}
		}
	}
}

var (
	idRE    = regexp.MustCompile(`^[A-Z]+(-[A-Z0-9]+)+$`)
	digitRE = regexp.MustCompile(`[0-9]`)
)
