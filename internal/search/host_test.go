package search

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/probetest"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/tune"
)

func fakeTree(t *testing.T) hostfs.FS {
	t.Helper()
	return fixture.Files(t, map[string]string{
		"proc/sys/net/ipv4/tcp_rmem":        "4096\t4096\t4096\n",
		"proc/sys/net/ipv4/tcp_wmem":        "4096\t4096\t4096\n",
		"proc/sys/net/core/somaxconn":       "16\n",
		"proc/sys/net/ipv4/tcp_fin_timeout": "60\n",
		"proc/sys/kernel/random/boot_id":    "6a3f2a1e-4b8c-4a51-9d0e-2f1d8d3c0b11\n",
		"etc/machine-id":                    "0123456789abcdef0123456789abcdef\n",
	})
}

// wmemProbe reads the tree: bandwidth ×4 once tcp_wmem's max is above
// 4096, whatever else is set; ±3% per sample.
func wmemProbe(fs hostfs.FS, rng *rand.Rand) *probetest.Fake {
	return &probetest.Fake{ProbeName: "net.tcp", Rng: rng,
		Metric: []run.Metric{{Name: "bandwidth", Unit: "MB/s", Better: run.Higher}},
		Sample: func(rng *rand.Rand) (map[string]float64, error) {
			w, _ := fs.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
			bw := 500.0
			if !strings.HasSuffix(strings.TrimSpace(string(w)), " 4096") && !strings.HasSuffix(strings.TrimSpace(string(w)), "\t4096") {
				bw = 2000
			}
			return map[string]float64{"bandwidth": bw * (1 + 0.03*(2*rng.Float64()-1))}, nil
		}}
}

func hostSearch(t *testing.T, fs hostfs.FS) (Options, *Host) {
	ks, _ := Space(FromKnobs{FS: fakeTree(t)}, SpaceOptions{Only: true, Add: []Knob{
		mustKnob(t, "net.ipv4.tcp_rmem=4096 131072 6291456"),
		mustKnob(t, "net.ipv4.tcp_wmem=4096 16384 4194304"),
		mustKnob(t, "net.core.somaxconn=4096"),
		mustKnob(t, "net.ipv4.tcp_fin_timeout=15"),
	}})
	p := wmemProbe(fs, rand.New(rand.NewPCG(3, 4)))
	h := &Host{Tune: tune.Host{FS: fs, Dir: t.TempDir()}, Source: "tune search web",
		Items: []bench.Item{{Probe: p, Params: probe.Params{}, MaxRuns: 5}},
		Bench: bench.Options{MinRuns: 5, MaxRuns: 5, Budget: time.Hour, NoNoiseCheck: true}}
	return Options{Probe: "net.tcp", Knobs: ks}, h
}

func mustKnob(t *testing.T, s string) Knob {
	k, err := ParseKnobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func read(t *testing.T, fs hostfs.FS, name string) string {
	v, err := tune.Read(fs, audit.Change{Kind: audit.KindSysctl, Target: name})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// On a tree, through bench.Interleave and tune's journal: the search finds
// tcp_wmem, drops the rest, restores every file; with apply it leaves the
// winner journaled, and the exported profile makes tune's plan write it.
func TestHostSearchRestoresAndApplies(t *testing.T) {
	fs := fakeTree(t)
	opt, h := hostSearch(t, fs)
	res, err := OnHost(context.Background(), opt, h, false)
	if err != nil {
		t.Fatal(err)
	}
	w := res.WinnerConfig()
	if !res.Confirmed || len(w) != 1 || w["net.ipv4.tcp_wmem"] != "4096 16384 4194304" {
		t.Fatalf("winner %v confirmed %v: %s", w, res.Confirmed, res.Conclusion)
	}
	if !res.Restored || read(t, fs, "net.ipv4.tcp_wmem") != "4096 4096 4096" {
		t.Fatalf("not restored: %v", res.Notes)
	}
	if j, _ := h.Tune.Status(); j != nil {
		t.Fatalf("a journal is left: %+v", j)
	}

	// --apply leaves the winner, journaled, and revert undoes it.
	opt, h = hostSearch(t, fs)
	res, err = OnHost(context.Background(), opt, h, true)
	if err != nil || !res.Applied {
		t.Fatalf("apply: %v %+v", err, res)
	}
	if got := read(t, fs, "net.ipv4.tcp_wmem"); got != "4096 16384 4194304" {
		t.Fatalf("wmem %q after --apply", got)
	}
	if _, err := h.Tune.Revert(tune.RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, fs, "net.ipv4.tcp_wmem"); got != "4096 4096 4096" {
		t.Fatalf("wmem %q after revert", got)
	}

	// The profile: audit reads it, tune's plan writes the winner.
	b, err := Profile(res, "searched-web", "web")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := audit.ParseProfile("searched-web.yaml", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	s, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plan := tune.MakePlan(s, wl)
	found := false
	for _, it := range plan.Items {
		if it.Change.Target == "net.ipv4.tcp_wmem" && it.Change.Value == "4096 16384 4194304" {
			found = true
		}
	}
	if !found {
		t.Errorf("tune's plan from the exported profile does not set tcp_wmem:\n%s\n%+v", b, plan.Items)
	}
}

// A search refuses to start over an active journal; Ctrl-C mid-search
// restores.
func TestHostSearchRefusesAndCancels(t *testing.T) {
	fs := fakeTree(t)
	opt, h := hostSearch(t, fs)
	if _, err := h.Tune.Apply(context.Background(), tune.Plan{Items: []tune.Item{{Change: audit.Change{Kind: audit.KindSysctl, Target: "net.core.somaxconn", Value: "128"}}}}, tune.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := OnHost(context.Background(), opt, h, false); err == nil || !strings.Contains(err.Error(), "tune revert") {
		t.Fatalf("err %v, want a refusal naming tune revert", err)
	}
	if _, err := h.Tune.Revert(tune.RevertOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	h.Interleave = func(c context.Context, items []bench.Item, io bench.InterleaveOptions, bo bench.Options) ([]*run.Run, *bench.Interleaved, error) {
		if calls++; calls == 2 {
			if err := io.States[1].Apply(c); err != nil {
				t.Fatal(err)
			}
			cancel()
			return nil, nil, bench.ErrInterrupted
		}
		return bench.Interleave(c, items, io, bo)
	}
	res, err := OnHost(ctx, opt, h, true)
	if err == nil || res == nil || !res.Restored || res.Applied {
		t.Fatalf("cancelled search: err %v res %+v", err, res)
	}
	for _, k := range []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"} {
		if got := read(t, fs, k); got != "4096 4096 4096" {
			t.Errorf("%s %q after Ctrl-C", k, got)
		}
	}
}
