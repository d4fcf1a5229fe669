package hostnoise

import "time"

// Result is one sentinel reading over a set of CPUs.
type Result struct {
	Threshold time.Duration // gaps longer than this count as lost
	CPUs      []CPU         // in the order asked

	// Over all CPUs: lost time in percent of the time spun (the per-CPU
	// figures weighted by how long each spun), descheduling events per
	// second per CPU, and the longest gap anywhere.
	LostPct             float64
	InterruptionsPerSec float64
	MaxGap              time.Duration
	Gaps                []Bucket // histogram of every gap ≥ 1 µs, all CPUs
}

// CPU is the reading of one CPU's spinner.
type CPU struct {
	CPU                 int
	Spun                time.Duration // time spent spinning (d, or less when cancelled)
	Reads               int64         // clock reads; Spun/Reads is the loop period
	Lost                time.Duration // sum of the gaps above Threshold
	Interruptions       int64         // how many gaps were above Threshold
	LostPct             float64       // Lost in percent of Spun
	InterruptionsPerSec float64
	MaxGap              time.Duration // longest gap, above Threshold or not
	Gaps                []Bucket
}

// Bucket is a histogram bin: Count gaps with Lo ≤ gap < Hi, lasting Sum
// together. Bins are powers of two of nanoseconds.
type Bucket struct {
	Lo, Hi time.Duration
	Count  int64
	Sum    time.Duration
}

// summarize turns the spinners' accumulators into a Result.
func summarize(cpus []int, accs []accumulator, spun []time.Duration) Result {
	res := Result{Threshold: Threshold, CPUs: make([]CPU, len(cpus))}
	var all accumulator
	var total time.Duration
	for i := range cpus {
		a := &accs[i]
		res.CPUs[i] = CPU{
			CPU: cpus[i], Spun: spun[i], Reads: a.reads, Lost: a.lost, Interruptions: a.count,
			LostPct: pct(a.lost, spun[i]), InterruptionsPerSec: rate(a.count, spun[i]),
			MaxGap: a.max, Gaps: a.buckets(),
		}
		all.add(a)
		total += spun[i]
	}
	res.LostPct = pct(all.lost, total)
	res.InterruptionsPerSec = rate(all.count, total)
	res.MaxGap = all.max
	res.Gaps = all.buckets()
	return res
}

func pct(lost, spun time.Duration) float64 {
	if spun <= 0 {
		return 0
	}
	return 100 * float64(lost) / float64(spun)
}

func rate(n int64, spun time.Duration) float64 {
	if spun <= 0 {
		return 0
	}
	return float64(n) / spun.Seconds()
}
