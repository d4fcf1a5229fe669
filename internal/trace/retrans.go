package trace

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"sort"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/perflab/perflab/internal/bpf"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"golang.org/x/sys/unix"
)

// RetransOptions selects what `trace retrans` records.
type RetransOptions struct {
	Duration  time.Duration
	PID       int    // only flows whose socket this process owns; 0: all
	MaxEvents int    // events kept in the report (the summary counts all); 0: 1000
	Ready     func() // called once the probes are attached (tests, progress)
}

// RetransEvent is one retransmission or tail-loss probe.
type RetransEvent struct {
	Time  time.Time      `json:"time"`
	Kind  string         `json:"kind"` // "retrans" or "tlp" (tail-loss probe)
	PID   int            `json:"pid,omitempty"`
	Comm  string         `json:"comm,omitempty"`
	Src   netip.AddrPort `json:"src"`
	Dst   netip.AddrPort `json:"dst"`
	State string         `json:"state"`
	Segs  int            `json:"segments"`
	// LocalDrop: the kernel sent it but this host dropped it on the way
	// out (netfilter, qdisc, device).
	LocalDrop bool `json:"local_drop,omitempty"`
}

// Flow is the per-connection summary.
type Flow struct {
	Src      netip.AddrPort `json:"src"`
	Dst      netip.AddrPort `json:"dst"`
	PID      int            `json:"pid,omitempty"`
	Comm     string         `json:"comm,omitempty"`
	State    string         `json:"last_state"`
	Retrans  int            `json:"retransmits"`
	Segs     int            `json:"segments"`
	TLP      int            `json:"tail_loss_probes"`
	PerSec   float64        `json:"retransmits_per_s"`
	SharePct float64        `json:"share_pct"` // of all segments retransmitted on the host
}

// RetransReport is the result of a trace.
type RetransReport struct {
	Seconds    float64        `json:"seconds"`
	Retrans    int            `json:"retransmits"`
	Segs       int            `json:"segments"`
	TLP        int            `json:"tail_loss_probes"`
	Failed     int            `json:"failed_not_sent"`
	LocalDrops int            `json:"dropped_locally"`
	Lost       uint64         `json:"events_lost"`
	Flows      []Flow         `json:"flows"`
	Events     []RetransEvent `json:"events"`
	Truncated  int            `json:"events_not_listed,omitempty"`
	// Counter is RetransSegs of perflab's own network namespace over the
	// same time (/proc/net/snmp); the tracer sees every namespace.
	CounterSegs *float64 `json:"netns_counter_retrans_segs,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// TCP states as in include/net/tcp_states.h.
var tcpStates = [...]string{"", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
	"TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV"}

func stateName(s uint8) string {
	if int(s) < len(tcpStates) && s != 0 {
		return tcpStates[s]
	}
	return "UNKNOWN"
}

// Retrans traces TCP retransmissions for o.Duration or until ctx ends.
func Retrans(ctx context.Context, fs hostfs.FS, o RetransOptions) (*RetransReport, error) {
	if o.PID != 0 && !fs.Exists(fmt.Sprintf("/proc/%d", o.PID)) {
		return nil, clierr.Usagef("give the PID of a running process", "no process %d", o.PID)
	}
	if err := Ready(fs, Needs{BTFTypes: []string{"btf_trace_tcp_retransmit_skb"}}); err != nil {
		return nil, err
	}
	spec, err := bpf.LoadRetrans()
	if err != nil {
		return nil, loadErr("retrans", err)
	}
	var notes []string
	main := bpf.RetransProgTcpRetransmitSkb
	if tracepointArgs("tcp_retransmit_skb") >= 3 {
		main = bpf.RetransProgTcpRetransmitSkbErr
		delete(spec.Programs, bpf.RetransProgTcpRetransmitSkb)
	} else {
		delete(spec.Programs, bpf.RetransProgTcpRetransmitSkbErr)
	}
	tlp := haveFunc("tcp_send_loss_probe")
	if !tlp {
		delete(spec.Programs, bpf.RetransProgTcpSendLossProbe)
		notes = append(notes, "tail-loss probes not traced: the kernel has no tcp_send_loss_probe in its BTF")
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil && tlp {
		// fentry can be refused where tp_btf works (no trampolines, lockdown).
		tlp = false
		delete(spec.Programs, bpf.RetransProgTcpSendLossProbe)
		notes = append(notes, "tail-loss probes not told apart: the kernel refused fentry on tcp_send_loss_probe; probes that resend data count as retransmissions (nstat TcpExtTCPLossProbes has the total)")
		coll, err = ebpf.NewCollection(spec)
	}
	if err != nil {
		return nil, loadErr("retrans", err)
	}
	defer coll.Close()
	var ls links
	defer func() { ls.Close() }()
	l, err := attachTracing(coll.Programs[main])
	if err != nil {
		return nil, loadErr("retrans", err)
	}
	ls = append(ls, l)
	if tlp {
		if l, err := attachTracing(coll.Programs[bpf.RetransProgTcpSendLossProbe]); err == nil {
			ls = append(ls, l)
		} else {
			notes = append(notes, "tail-loss probes not traced: fentry on tcp_send_loss_probe failed: "+firstLine(err))
		}
	}
	rd, err := ringbuf.NewReader(coll.Maps[bpf.RetransMapEvents])
	if err != nil {
		return nil, loadErr("retrans", err)
	}
	defer rd.Close()

	before := netnsRetransSegs(fs)
	start := time.Now()
	mono := monoOffset()
	if o.Ready != nil {
		o.Ready()
	}
	col := newRetransCollector(fs, o)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			// Until the flush after detaching: every event still in the
			// ring is read first (a loaded machine's reader lags behind).
			rec, err := rd.Read()
			if err != nil {
				return
			}
			var e bpf.RetransRetransEvent
			if binary.Read(bytes.NewReader(rec.RawSample), binary.NativeEndian, &e) == nil {
				col.add(&e, mono)
			}
		}
	}()
	wait(ctx, o.Duration)
	ls.Close()
	ls = nil
	if rd.Flush() != nil {
		rd.Close()
	}
	<-done
	rd.Close()
	elapsed := time.Since(start)

	rep := col.report(elapsed)
	rep.Notes = append(notes, rep.Notes...)
	var lost [2]uint64
	for i := range lost {
		_ = coll.Maps[bpf.RetransMapLost].Lookup(uint32(i), &lost[i])
	}
	rep.Lost = lost[0] + lost[1]
	if after := netnsRetransSegs(fs); before != nil && after != nil {
		d := *after - *before
		rep.CounterSegs = &d
	}
	return rep, nil
}

// wait returns after d or when ctx ends.
func wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// monoOffset converts bpf_ktime_get_ns (CLOCK_MONOTONIC) to wall time.
func monoOffset() time.Time {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Now().Add(-time.Duration(ts.Nano()))
}

func netnsRetransSegs(fs hostfs.FS) *float64 {
	p, err := fs.Proc()
	if err != nil {
		return nil
	}
	self, err := p.Self()
	if err != nil {
		return nil
	}
	s, err := self.Snmp()
	if err != nil {
		return nil
	}
	return s.Tcp.RetransSegs
}

type flowKey struct{ src, dst netip.AddrPort }

type retransCollector struct {
	o      RetransOptions
	owners *sockOwners
	events []RetransEvent
	flows  map[flowKey]*Flow
	order  []flowKey
	extra  int
	total  RetransReport
}

func newRetransCollector(fs hostfs.FS, o RetransOptions) *retransCollector {
	if o.MaxEvents == 0 {
		o.MaxEvents = 1000
	}
	return &retransCollector{o: o, owners: newSockOwners(fs), flows: map[flowKey]*Flow{}}
}

func addrOf(family uint16, b [16]uint8, port uint16) netip.AddrPort {
	var a netip.Addr
	if family == unix.AF_INET {
		a = netip.AddrFrom4([4]byte(b[:4]))
	} else {
		a = netip.AddrFrom16(b).Unmap()
	}
	return netip.AddrPortFrom(a, port)
}

func (c *retransCollector) add(e *bpf.RetransRetransEvent, mono time.Time) {
	pid, comm := c.owners.lookup(e.SockIno)
	if c.o.PID != 0 && pid != c.o.PID {
		return
	}
	ev := RetransEvent{
		Time: mono.Add(time.Duration(e.TsNs)), Kind: "retrans", PID: pid, Comm: comm,
		Src: addrOf(e.Family, e.Saddr, e.Sport), Dst: addrOf(e.Family, e.Daddr, e.Dport),
		State: stateName(e.State), Segs: int(e.Segs),
	}
	switch {
	case e.Kind == 2:
		ev.Kind, ev.Segs = "tlp", 0
	case notAttempted(e.Err):
		// Given up before sending (original still in a host queue, no
		// route, no memory, outside the window): the kernel does not
		// count it in RetransSegs either.
		c.total.Failed++
		return
	case e.Err != 0:
		// Counted by the kernel, then dropped on the way out (netfilter,
		// qdisc, device): a local drop, itself worth knowing.
		ev.LocalDrop = true
		c.total.LocalDrops++
	}
	k := flowKey{ev.Src, ev.Dst}
	f := c.flows[k]
	if f == nil {
		f = &Flow{Src: ev.Src, Dst: ev.Dst}
		c.flows[k] = f
		c.order = append(c.order, k)
	}
	if pid != 0 {
		f.PID, f.Comm = pid, comm
	}
	f.State = ev.State
	if ev.Kind == "tlp" {
		f.TLP++
		c.total.TLP++
	} else {
		f.Retrans++
		f.Segs += ev.Segs
		c.total.Retrans++
		c.total.Segs += ev.Segs
	}
	if len(c.events) < c.o.MaxEvents {
		c.events = append(c.events, ev)
	} else {
		c.extra++
	}
}

func (c *retransCollector) report(elapsed time.Duration) *RetransReport {
	r := c.total
	r.Seconds = elapsed.Seconds()
	r.Events, r.Truncated = c.events, c.extra
	if r.Events == nil {
		r.Events = []RetransEvent{}
	}
	r.Flows = summarizeFlows(c.flows, r.Seconds, r.Segs)
	if c.owners.unresolved > 0 {
		r.Notes = append(r.Notes, "some sockets had no owning process by the time perflab looked (closed, or kernel sockets)")
	}
	return &r
}

// summarizeFlows orders flows by retransmitted segments and computes rates
// and each flow's share of all segments retransmitted.
func summarizeFlows(m map[flowKey]*Flow, seconds float64, totalSegs int) []Flow {
	out := make([]Flow, 0, len(m))
	for _, f := range m {
		g := *f
		if seconds > 0 {
			g.PerSec = float64(g.Retrans) / seconds
		}
		if totalSegs > 0 {
			g.SharePct = 100 * float64(g.Segs) / float64(totalSegs)
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Segs != out[j].Segs {
			return out[i].Segs > out[j].Segs
		}
		if out[i].TLP != out[j].TLP {
			return out[i].TLP > out[j].TLP
		}
		return out[i].Src.String()+out[i].Dst.String() < out[j].Src.String()+out[j].Dst.String()
	})
	return out
}

// notAttempted reports whether a tcp_retransmit_skb error (6.13+) means
// the kernel gave up before counting and sending the retransmission.
func notAttempted(err int16) bool {
	switch syscall.Errno(-err) {
	case unix.EBUSY, unix.EAGAIN, unix.EHOSTUNREACH, unix.ENOMEM:
		return true
	}
	return false
}
