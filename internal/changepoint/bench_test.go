package changepoint

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDetect measures a search on a history of n runs with one step
// (two significance tests: the step, then the failed split after it).
func BenchmarkDetect(b *testing.B) {
	for _, n := range []int{50, 200, 1000} {
		r := rand.New(rand.NewPCG(1, 1))
		xs := append(noise(r, n/2, 100, 2), noise(r, n-n/2, 90, 2)...)
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Detect(xs, Options{})
			}
		})
	}
}
