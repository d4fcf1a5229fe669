package bisect

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/probetest"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/tune"
)

// tree is the kvm fixture host with THP, two sysctls and the ids tune
// binds its journal to set for the test.
func tree(t *testing.T, thp, swappiness, autogroup string) hostfs.FS {
	t.Helper()
	files := map[string]string{
		"/sys/kernel/mm/transparent_hugepage/enabled": strings.Replace("always madvise never", thp, "["+thp+"]", 1) + "\n",
		"/proc/sys/vm/swappiness":                     swappiness + "\n",
		"/proc/sys/kernel/sched_autogroup_enabled":    autogroup + "\n",
		"/proc/sys/kernel/random/boot_id":             "6a3f2a1e-4b8c-4a51-9d0e-2f1d8d3c0b11\n",
		"/etc/machine-id":                             "0123456789abcdef0123456789abcdef\n",
	}
	return fixture.Tree(t, "kvm", files)
}

// pageFaults is a fake memory.pagefault: its cost per page follows the THP
// file of the tree (×8 without huge pages); swappiness and autogroup do
// nothing here. The host drifts ±10% between runs.
func pageFaults(fs hostfs.FS, rng *rand.Rand) *probetest.Fake {
	return &probetest.Fake{ProbeName: "memory.pagefault", Rng: rng, Drift: 0.1,
		Metric: []run.Metric{{Name: "ns_per_page.thp", Unit: "ns", Better: run.Lower}, {Name: "ns_per_page.4KiB", Unit: "ns", Better: run.Lower}},
		Sample: func(rng *rand.Rand) (map[string]float64, error) {
			b, err := fs.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
			if err != nil {
				return nil, err
			}
			cost := 250.0
			// A real kernel shows "always madvise [never]"; the fake tree
			// holds what tune wrote ("never").
			if v := strings.TrimSpace(string(b)); strings.Contains(v, "[never]") || v == "never" {
				cost = 2000
			}
			noise := 1 + 0.01*rng.NormFloat64()
			return map[string]float64{"ns_per_page.thp": cost * noise, "ns_per_page.4KiB": 2000 * noise}, nil
		}}
}

func snap(thp, swappiness, autogroup string) *snapshot.Snapshot {
	return &snapshot.Snapshot{ID: "s-" + thp, Memory: snapshot.Memory{THP: snapshot.THP{Enabled: thp}},
		Sysctl: map[string]string{"vm.swappiness": swappiness, "kernel.sched_autogroup_enabled": autogroup},
		Kernel: snapshot.Kernel{Params: map[string]string{"mitigations": map[string]string{"always": "off"}[thp]}}}
}

func options(t *testing.T, fs hostfs.FS, good, bad *snapshot.Snapshot) Options {
	cands, un := Candidates(good, bad)
	p := pageFaults(fs, rand.New(rand.NewPCG(1, 2)))
	item := bench.Item{Probe: p, Params: probe.Params{}, MaxRuns: 6}
	return Options{
		Host: tune.Host{FS: fs, Dir: t.TempDir()}, Items: []bench.Item{item},
		Bench:      bench.Options{MinRuns: 6, MaxRuns: 6, Budget: time.Hour, NoNoiseCheck: true},
		Candidates: cands, Untestable: un, Seed: 7,
	}
}

// The THP case on a fake host: the good snapshot has THP always,
// this host never plus two irrelevant differences. Bisect names THP,
// confirmed with most of the gap, clears the others with fewer runs than
// one-at-a-time testing, lists the boot parameter as untestable, and leaves
// every knob as it found it.
func TestBisectFindsTHP(t *testing.T) {
	fs := tree(t, "never", "10", "0")
	good, bad := snap("always", "60", "1"), snap("never", "10", "0")
	opt := options(t, fs, good, bad)
	if len(opt.Candidates) != 3 {
		t.Fatalf("candidates %+v, want THP, swappiness, autogroup", opt.Candidates)
	}
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "ns_per_page.thp" {
		t.Errorf("metric %s, want the one that moved", res.Metric)
	}
	var thp *CauseResult
	for i, c := range res.Causes {
		switch {
		case strings.Contains(c.Knob, "transparent_hugepage"):
			thp = &res.Causes[i]
		case c.Outcome != "cleared":
			t.Errorf("%s: %s, want cleared", c.Knob, c.Outcome)
		}
	}
	if thp == nil || !thp.Confirmed || thp.Improved != 3 || thp.Share < 0.8 || thp.Good != "always" || thp.Bad != "never" {
		t.Fatalf("THP: %+v, want confirmed in 3 of 3 with most of the gap", thp)
	}
	if !(thp.ShareLo <= 1 && 1 <= thp.ShareHi) {
		t.Errorf("THP share %.2f [%.2f, %.2f], want an interval covering all of it", thp.Share, thp.ShareLo, thp.ShareHi)
	}
	if res.Runs >= res.NaiveRuns {
		t.Errorf("%d runs, one at a time would take %d", res.Runs, res.NaiveRuns)
	}
	if len(res.Untestable) != 1 || !strings.Contains(res.Untestable[0].Instruction, "reboot") {
		t.Errorf("untestable %+v, want the mitigations boot parameter with a reboot instruction", res.Untestable)
	}
	if !res.Restored {
		t.Errorf("host not restored: %v", res.Notes)
	}
	for path, want := range map[string]string{"/sys/kernel/mm/transparent_hugepage/enabled": "never", "/proc/sys/vm/swappiness": "10", "/proc/sys/kernel/sched_autogroup_enabled": "0"} {
		b, _ := fs.ReadFile(path)
		if v := strings.TrimSpace(strings.NewReplacer("[", "", "]", "", "always madvise ", "").Replace(string(b))); v != want {
			t.Errorf("%s = %q after bisect, want %q", path, v, want)
		}
	}
	t.Logf("%d runs (one at a time: %d); steps %+v", res.Runs, res.NaiveRuns, res.Steps)
}

// Nothing to flip explains it: the search ends after one session.
func TestBisectNothingRecovers(t *testing.T) {
	fs := tree(t, "always", "10", "0")
	good, bad := snap("always", "60", "1"), snap("always", "10", "0")
	opt := options(t, fs, good, bad)
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || res.Steps[0].Outcome != "nothing" {
		t.Errorf("steps %+v, want one that recovers nothing", res.Steps)
	}
	for _, c := range res.Causes {
		if c.Confirmed || c.Outcome != "cleared" {
			t.Errorf("%+v", c)
		}
	}
	if !res.Restored || math.IsNaN(res.All.Ratio) {
		t.Errorf("restored %v all %+v", res.Restored, res.All)
	}
}

// An active tune journal is not bisect's to undo.
func TestBisectRefusesActiveJournal(t *testing.T) {
	fs := tree(t, "never", "10", "0")
	opt := options(t, fs, snap("always", "60", "1"), snap("never", "10", "0"))
	plan := tune.Plan{Workload: "web", Items: []tune.Item{{Change: opt.Candidates[0].Changes[0]}}}
	if _, err := opt.Host.Apply(context.Background(), plan, tune.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "tune revert") {
		t.Fatalf("err %v, want a refusal naming tune revert", err)
	}
}

// Ctrl-C mid-search: the host is restored all the same.
func TestBisectCancelledRestores(t *testing.T) {
	fs := tree(t, "never", "10", "0")
	opt := options(t, fs, snap("always", "60", "1"), snap("never", "10", "0"))
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	opt.Measure = func(c context.Context, items []bench.Item, io bench.InterleaveOptions, bo bench.Options) ([]*run.Run, *bench.Interleaved, error) {
		calls++
		if calls == 2 {
			// Mid-session: the test state is applied, then Ctrl-C.
			if err := io.States[1].Apply(c); err != nil {
				t.Fatal(err)
			}
			cancel()
			return nil, nil, bench.ErrInterrupted
		}
		return bench.Interleave(c, items, io, bo)
	}
	res, err := Run(ctx, opt)
	if err == nil {
		t.Fatal("a cancelled bisect returned no error")
	}
	if res == nil || !res.Restored {
		t.Fatalf("not restored after Ctrl-C: %+v", res)
	}
	b, _ := fs.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if v := strings.TrimSpace(string(b)); !strings.Contains(v, "[never]") && v != "never" {
		t.Errorf("THP %q after Ctrl-C, want never", b)
	}
}

// bufferProbe needs both buffers large: either alone does nothing (an
// interaction, as TCP's send and receive windows), and a third knob is
// irrelevant. Bisect reports the two as one joint cause and clears the
// third.
func bufferProbe(fs hostfs.FS, rng *rand.Rand) *probetest.Fake {
	return &probetest.Fake{ProbeName: "net.tcp", Rng: rng,
		Metric: []run.Metric{{Name: "bandwidth", Unit: "MB/s", Better: run.Higher}},
		Sample: func(rng *rand.Rand) (map[string]float64, error) {
			r, _ := fs.ReadFile("/proc/sys/net/ipv4/tcp_rmem")
			w, _ := fs.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
			bw := 50.0
			if !strings.HasSuffix(strings.TrimSpace(string(r)), " 4096") && !strings.HasSuffix(strings.TrimSpace(string(w)), " 4096") {
				bw = 2000
			}
			return map[string]float64{"bandwidth": bw * (1 + 0.01*rng.NormFloat64())}, nil
		}}
}

func TestBisectJointCause(t *testing.T) {
	fs := fixture.Files(t, map[string]string{
		"proc/sys/net/ipv4/tcp_rmem":        "4096 4096 4096\n",
		"proc/sys/net/ipv4/tcp_wmem":        "4096 4096 4096\n",
		"proc/sys/net/ipv4/tcp_fin_timeout": "30\n",
		"proc/sys/kernel/random/boot_id":    "6a3f2a1e-4b8c-4a51-9d0e-2f1d8d3c0b11\n",
		"etc/machine-id":                    "0123456789abcdef0123456789abcdef\n",
	})
	good := &snapshot.Snapshot{Sysctl: map[string]string{"net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.tcp_wmem": "4096 16384 4194304", "net.ipv4.tcp_fin_timeout": "60"}}
	bad := &snapshot.Snapshot{Sysctl: map[string]string{"net.ipv4.tcp_rmem": "4096 4096 4096", "net.ipv4.tcp_wmem": "4096 4096 4096", "net.ipv4.tcp_fin_timeout": "30"}}
	cands, _ := Candidates(good, bad)
	p := bufferProbe(fs, rand.New(rand.NewPCG(5, 5)))
	res, err := Run(context.Background(), Options{Host: tune.Host{FS: fs, Dir: t.TempDir()},
		Items: []bench.Item{{Probe: p, Params: probe.Params{}, MaxRuns: 6}},
		Bench: bench.Options{MinRuns: 6, MaxRuns: 6, Budget: time.Hour, NoNoiseCheck: true}, Candidates: cands, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Causes {
		switch c.Knob {
		case "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem":
			if !c.Confirmed || len(c.Joint) != 1 {
				t.Errorf("%s: %+v, want confirmed jointly with the other buffer", c.Knob, c)
			}
		case "net.ipv4.tcp_fin_timeout":
			if c.Outcome != "cleared" {
				t.Errorf("fin_timeout: %s, want cleared", c.Outcome)
			}
		}
	}
	for i, st := range res.Steps {
		e := Effect{}
		if st.Effect != nil {
			e = *st.Effect
		}
		t.Logf("step %d %v %s %+v %s", i, st.Knobs, st.Outcome, e, st.Why)
	}
	if !res.Restored {
		t.Error("not restored")
	}
}
