package compare

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/perflab/perflab/internal/run"
)

func ptr[T any](v T) *T { return &v }

func snapTime(id string) time.Time {
	return time.Date(2026, 1, 1, 0, len(id), 0, 0, time.UTC)
}

// replicate makes k runs of r: the same samples, each run scaled by its
// own factor 1 + drift·N(0,1), as repeated runs on a drifting host are.
// Every metric of one run moves by the same factor. Snapshot and monitor
// are shared.
func replicate(r *run.Run, k int, drift float64, seed uint64) []*run.Run {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	out := make([]*run.Run, k)
	for i := range out {
		c := *r
		c.ID = fmt.Sprintf("%s.%d", r.ID, i)
		f := 1 + drift*rng.NormFloat64()
		c.Samples = make([]run.Sample, len(r.Samples))
		for j, s := range r.Samples {
			s.Value *= f
			c.Samples[j] = s
		}
		out[i] = &c
	}
	return out
}
