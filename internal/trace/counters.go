package trace

import (
	"context"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
)

// RetransCounters is the fallback when tracing is impossible: the kernel's
// retransmission counters of perflab's network namespace (/proc/net/snmp
// RetransSegs, /proc/net/netstat TCPLossProbes) over the duration. It has
// no flows, processes or other namespaces, and the report says so.
func RetransCounters(ctx context.Context, fs hostfs.FS, d time.Duration) (*RetransReport, error) {
	read := func() (segs, tlp *float64) {
		p, err := fs.Proc()
		if err != nil {
			return nil, nil
		}
		self, err := p.Self()
		if err != nil {
			return nil, nil
		}
		if s, err := self.Snmp(); err == nil {
			segs = s.Tcp.RetransSegs
		}
		if n, err := self.Netstat(); err == nil {
			tlp = n.TcpExt.TCPLossProbes
		}
		return
	}
	s0, t0 := read()
	if s0 == nil {
		return nil, clierr.Runtimef("check that /proc is mounted", "cannot read /proc/net/snmp")
	}
	start := time.Now()
	wait(ctx, d)
	s1, t1 := read()
	r := &RetransReport{Seconds: time.Since(start).Seconds(), Flows: []Flow{}, Events: []RetransEvent{}}
	if s1 != nil {
		v := *s1 - *s0
		r.CounterSegs = &v
		r.Segs = int(v)
	}
	if t0 != nil && t1 != nil {
		r.TLP = int(*t1 - *t0)
	}
	r.Notes = []string{"counters only (--counters): host-wide totals of perflab's network namespace, no flows or processes; retransmits counts segments"}
	return r, nil
}
