package compare

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

func readGo(t *testing.T, path string) []*run.Run {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runs, err := ReadGoBench(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestReadGoBench(t *testing.T) {
	runs := readGo(t, "testdata/old.txt")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	if r.Probe != "go:example.com/codec" || r.Params["cpu"] != "Intel(R) Xeon(R) CPU @ 2.20GHz" || r.Params["goos"] != "linux" {
		t.Errorf("run %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string]run.Better{
		"Encode/size=1k-2 sec/op":    run.Lower,
		"Encode/size=1k-2 B/s":       run.Higher,
		"Encode/size=1k-2 B/op":      run.Lower,
		"Encode/size=1k-2 allocs/op": run.Lower,
		"Decode-2 sec/op":            run.Lower,
	}
	if len(r.Metrics) != len(want) {
		t.Errorf("metrics %+v", r.Metrics)
	}
	for _, m := range r.Metrics {
		if b, ok := want[m.Name]; !ok || b != m.Better {
			t.Errorf("metric %+v", m)
		}
	}
	v := r.Values("Decode-2 sec/op")
	if len(v) != 6 || math.Abs(v[0]-5100e-9) > 1e-15 {
		t.Errorf("Decode values %v (tidied to seconds)", v)
	}
}

// Comparing two Go benchmark files gives benchstat's numbers: the same
// medians, intervals and p-values for every benchmark and unit.
func TestGoBenchAgreesWithBenchstat(t *testing.T) {
	oldRuns, newRuns := readGo(t, "testdata/old.txt"), readGo(t, "testdata/new.txt")
	c, err := Compare([]Side{{Name: "old", Runs: oldRuns}, {Name: "new", Runs: newRuns}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Read the files independently with benchfmt, as benchstat does.
	samples := func(path string) map[string][]float64 {
		f, _ := os.Open(path)
		defer f.Close()
		out := map[string][]float64{}
		br := benchfmt.NewReader(f, path)
		for br.Scan() {
			if res, ok := br.Result().(*benchfmt.Result); ok {
				for _, v := range res.Values {
					k := res.Name.String() + " " + v.Unit
					out[k] = append(out[k], v.Value)
				}
			}
		}
		return out
	}
	so, sn := samples("testdata/old.txt"), samples("testdata/new.txt")
	th := &benchmath.DefaultThresholds
	for _, d := range c.Pairs[0].Deltas {
		row := c.Metrics[d.Row]
		bo := benchmath.NewSample(so[row.Metric], th)
		bn := benchmath.NewSample(sn[row.Metric], th)
		wo := benchmath.AssumeNothing.Summary(bo, 0.95)
		cmp := benchmath.AssumeNothing.Compare(bo, bn)
		got := row.Sides[0].Summary
		if got.Median != wo.Center || got.Lo != wo.Lo || got.Hi != wo.Hi {
			t.Errorf("%s: median %v [%v,%v], benchstat %v [%v,%v]", row.Metric, got.Median, got.Lo, got.Hi, wo.Center, wo.Lo, wo.Hi)
		}
		if math.Abs(d.P-math.Min(1, cmp.P)) > 1e-12 {
			t.Errorf("%s: p=%v benchstat %v", row.Metric, d.P, cmp.P)
		}
		// benchstat's "~" is our not-significant (it does not adjust
		// across metrics, so compare with the raw p).
		if sig := d.P <= cmp.Alpha; sig != (cmp.FormatDelta(wo.Center, 0) != "~") {
			t.Errorf("%s: significance differs", row.Metric)
		}
	}
	enc := findDelta(t, c, c.Pairs[0], "Encode/size=1k-2 sec/op")
	if enc.Verdict != Better || enc.DeltaPct > -9 {
		t.Errorf("encode: %+v", enc)
	}
	dec := findDelta(t, c, c.Pairs[0], "Decode-2 sec/op")
	if dec.Verdict == Better || dec.Verdict == Worse {
		t.Errorf("decode did not change: %+v", dec)
	}
}

func TestReadGoBenchRejects(t *testing.T) {
	for name, in := range map[string]string{
		"json":      `{"kind": "perflab-runs"}`,
		"empty":     "",
		"prose":     "hello world\nthis is not a benchmark\n",
		"bad-value": "BenchmarkX-2 10 abc ns/op\n",
	} {
		_, err := ReadGoBench(strings.NewReader(in), name)
		if !errors.Is(err, ErrNotGoBench) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

func FuzzReadGoBench(f *testing.F) {
	for _, p := range []string{"testdata/old.txt", "testdata/new.txt"} {
		data, _ := os.ReadFile(p)
		f.Add(string(data))
	}
	f.Add("BenchmarkX-2 10 5 ns/op 3 B/op\nUnit ns/op better=higher\n")
	f.Fuzz(func(t *testing.T, in string) {
		runs, err := ReadGoBench(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		for _, r := range runs {
			if len(r.Metrics) == 0 {
				t.Fatalf("run without metrics: %+v", r)
			}
			for _, s := range r.Samples {
				if _, ok := r.Metric(s.Metric); !ok {
					t.Fatalf("sample of undeclared metric %q", s.Metric)
				}
			}
		}
		// Whatever parsed must be comparable with itself.
		if _, err := Compare([]Side{{Name: "a", Runs: runs}, {Name: "b", Runs: runs}}, Options{}); err != nil {
			t.Fatalf("self-compare: %v", err)
		}
	})
}

func TestReadGoBenchNonFinite(t *testing.T) {
	_, err := ReadGoBench(strings.NewReader("BenchmarkX-2 10 NaN ns/op\n"), "nan.txt")
	if err == nil || !strings.Contains(err.Error(), "nan.txt:1") {
		t.Errorf("err %v", err)
	}
}
