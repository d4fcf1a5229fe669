package compare

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// A 1-byte and a 64 KiB TCP stream share the metric name "bandwidth" but
// are different measurements: pooled, the 64 KiB side would look like a
// 1000× regression or the pool like noise. Runs with different parameters
// must stay apart, and sides that share no parameters must say so.
func TestParamsKeepMeasurementsApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	tcp := func(id, msg string, centre float64) *run.Run {
		r := mkRun(id, "net.tcp", "h", metricSpec{"bandwidth", "MB/s", run.Higher, noisy(rng, 10, centre, 0.01)})
		r.Params["msg_size"] = msg
		return r
	}
	// One side holds both kinds; the other only the large one.
	c, err := Compare([]Side{side("A", tcp("a1", "1", 1), tcp("a2", "65536", 2000)), side("B", tcp("b1", "65536", 2010))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Metrics) != 2 {
		t.Fatalf("%d rows, want one per msg_size: %+v", len(c.Metrics), c.Metrics)
	}
	for _, m := range c.Metrics {
		a := m.Sides[0]
		if a == nil || len(a.Samples) != 10 {
			t.Errorf("%s: side A pooled %v, want the 10 samples of its own parameters", m.Params, a)
		}
		if m.Params == "msg_size=65536" && (m.Sides[1] == nil || len(m.Sides[1].Samples) != 10) {
			t.Errorf("the 64 KiB rows were not paired")
		}
		if m.Params == "msg_size=1" && m.Sides[1] != nil {
			t.Errorf("the 1-byte row has a B side it never ran")
		}
	}

	// Nothing in common: the error names what each side ran.
	_, err = Compare([]Side{side("A", tcp("x1", "1", 1)), side("B", tcp("y1", "65536", 2000))}, Options{})
	if !errors.Is(err, ErrNothingInCommon) {
		t.Fatalf("different parameters on each side: %v, want ErrNothingInCommon", err)
	}

	// Same parameters everywhere: no params in the key, as before.
	c, err = Compare([]Side{side("A", replicate(tcp("p1", "65536", 2000), 2, 0.01, 1)...), side("B", replicate(tcp("q1", "65536", 1000), 2, 0.01, 2)...)}, Options{})
	if err != nil || c.Metrics[0].Params != "" || !strings.Contains(string(findDelta(t, c, c.Pairs[0], "bandwidth").Verdict), "worse") {
		t.Errorf("uniform parameters: %v %+v", err, c.Metrics)
	}
}
