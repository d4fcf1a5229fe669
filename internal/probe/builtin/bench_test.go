package builtin

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/probe"
)

// BenchmarkProbes runs each probe with its full defaults (or quick ones
// with PERFLAB_QUICK=1), one Iterate per b.N, and reports each metric's
// median and coefficient of variation; extra parameters come from
// PERFLAB_PARAMS="k=v k=v". It is the driver for the reference checks in
// docs/probes.md:
//
//	go test ./internal/probe/builtin -run '^$' -bench 'Probes/cpu$' -benchtime 10x
func BenchmarkProbes(b *testing.B) {
	for _, p := range All() {
		b.Run(p.Name(), func(b *testing.B) {
			params := p.Defaults(os.Getenv("PERFLAB_QUICK") == "1")
			if extra := os.Getenv("PERFLAB_PARAMS"); extra != "" {
				for _, kv := range strings.Fields(extra) {
					k, v, _ := strings.Cut(kv, "=")
					if _, ok := params[k]; ok {
						params[k] = v
					}
				}
			}
			dir := b.TempDir()
			if d := os.Getenv("PERFLAB_DIR"); d != "" {
				var err error
				if dir, err = os.MkdirTemp(d, "perflab-bench-"); err != nil {
					b.Fatal(err)
				}
				defer os.RemoveAll(dir)
			}
			env := &probe.Env{Params: params, Dir: dir, Log: io.Discard}
			ms, err := p.Metrics(params)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Setup(context.Background(), env); err != nil {
				b.Fatal(err)
			}
			defer p.Teardown(env)
			// One warm-up iteration, as the harness does.
			if _, err := p.Iterate(context.Background(), env); err != nil {
				b.Fatal(err)
			}
			samples := map[string][]float64{}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				vals, err := p.Iterate(context.Background(), env)
				if err != nil {
					b.Fatal(err)
				}
				for k, v := range vals {
					samples[k] = append(samples[k], v)
				}
			}
			b.StopTimer()
			// Printed, not logged: benchmark logs are cut after ten lines.
			if b.N > 1 {
				for _, n := range env.Notes {
					fmt.Printf("    note: %s\n", n)
				}
			}
			for _, m := range ms {
				v := samples[m.Name]
				med, cv := medianCV(v)
				if b.N > 1 {
					fmt.Printf("    %s: %-24s %12.4g %-9s cv %5.2f%%  (n=%d)\n", p.Name(), m.Name, med, m.Unit, 100*cv, len(v))
				}
				b.ReportMetric(med, strings.ReplaceAll(m.Name+"_"+m.Unit, "/", "_per_"))
			}
		})
	}
}

func medianCV(v []float64) (median, cv float64) {
	if len(v) == 0 {
		return 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var mean, sq float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	if len(v) > 1 && mean != 0 {
		cv = math.Sqrt(sq/float64(len(v)-1)) / mean
	}
	return median, cv
}
