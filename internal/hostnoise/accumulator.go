package hostnoise

import (
	"math/bits"
	"time"
)

// histFloor is the smallest gap the histogram keeps: below it are the
// loop's own clock reads (tens of ns) and nothing the host did.
const histFloor = time.Microsecond

// accumulator is the online summary of one thread's gaps between
// successive clock reads. It is a plain value with no clock of its own so
// that tests feed it synthetic gaps.
type accumulator struct {
	threshold time.Duration
	reads     int64             // gaps observed
	lost      time.Duration     // sum of gaps above threshold
	count     int64             // number of gaps above threshold
	max       time.Duration     // largest gap of all, above threshold or not
	hist      [64]int64         // gaps ≥ histFloor by power of two of their ns: count
	histSum   [64]time.Duration // … and summed length
}

// observe records one gap. It runs once per clock read in the spin loop,
// so the common case (a gap of a few tens of ns) is three compares.
func (a *accumulator) observe(gap time.Duration) {
	a.reads++
	if gap > a.max {
		a.max = gap
	}
	if gap > a.threshold {
		a.lost += gap
		a.count++
	}
	if gap >= histFloor {
		b := bits.Len64(uint64(gap)) - 1
		a.hist[b]++
		a.histSum[b] += gap
	}
}

// add merges b into a (for the all-CPU summary).
func (a *accumulator) add(b *accumulator) {
	a.reads += b.reads
	a.lost += b.lost
	a.count += b.count
	a.max = max(a.max, b.max)
	for i, n := range b.hist {
		a.hist[i] += n
		a.histSum[i] += b.histSum[i]
	}
}

// buckets lists the non-empty histogram buckets in increasing order.
func (a *accumulator) buckets() []Bucket {
	var out []Bucket
	for i, n := range a.hist {
		if n > 0 {
			out = append(out, Bucket{Lo: time.Duration(1) << i, Hi: time.Duration(1) << (i + 1), Count: n, Sum: a.histSum[i]})
		}
	}
	return out
}
