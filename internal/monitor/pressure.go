package monitor

// Stall is one reading of a resource's PSI "some" line: the share of time
// in which at least one task stalled on it.
type Stall struct {
	// Avg10 is the kernel's 10-second exponentially decaying average, in
	// percent. Read once a second it lags: after a CPU-heavy probe it still
	// shows most of that load during the first seconds of the next one.
	Avg10 float64
	// TotalUs is the cumulative stall time in µs. Two readings give the
	// exact share of the interval between them.
	TotalUs uint64
	OK      bool
}

func (s *Sampler) stall(res string) Stall {
	p, err := s.proc.PSIStatsForResource(res)
	if err != nil || p.Some == nil {
		return Stall{}
	}
	return Stall{Avg10: p.Some.Avg10, TotalUs: p.Some.Total, OK: true}
}

// stallPct is the percent of the dt seconds between readings a and b in
// which tasks stalled, or nil when either reading lacks PSI. The kernel
// brings the total up to date when the file is read, so the share is of
// exactly the interval; it is capped at 100 because the interval is timed
// by our clock just before each read, and read latency can make the stall
// time exceed it by a few µs.
func stallPct(a, b Stall, dt float64) *float64 {
	if !a.OK || !b.OK || dt <= 0 {
		return nil
	}
	return ptr(min(100, rate(a.TotalUs, b.TotalUs, dt)/1e4)) // µs/s → %
}

func ptr[T any](v T) *T { return &v }
