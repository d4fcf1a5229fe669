package trace

import (
	"context"
	"io"
	"math"
	"net"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

// A bulk transfer across a link that drops 5 % of the client's packets:
// the trace must attribute the retransmissions to that flow's ports and
// count as many segments as the client namespace's TcpRetransSegs.
func TestRetransLossyFlow(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "nft")
	testenv.RequireTool(t, "nstat")
	testenv.RequireTool(t, "ip")
	fs, _ := hostfs.New("/")
	if err := Ready(fs, Needs{BTFTypes: []string{"btf_trace_tcp_retransmit_skb"}}); err != nil {
		testenv.Unavailable(t, "eBPF tracing: %v", err)
	}
	p := newLossyPair(t, 5)
	ln := listenIn(t, p.srv, p.srvAddr+":15201")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()

	ready := make(chan struct{})
	var rep *RetransReport
	var terr error
	done := make(chan struct{})
	// Traced from Ready until the context ends, so the window holds the
	// whole transfer however loaded the machine is.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		defer close(done)
		rep, terr = Retrans(ctx, fs, RetransOptions{Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case <-done:
		t.Fatal(terr)
	}
	ports, want := lossyTransfer(t, p.cli, 40, func() net.Conn { return dialIn(t, p.cli, p.srvAddr+":15201") })
	stop()
	<-done
	if terr != nil {
		t.Fatal(terr)
	}
	var flowSegs, other int
	for _, f := range rep.Flows {
		if f.Dst.Port() == 15201 && ports[int(f.Src.Port())] {
			flowSegs += f.Segs
			if f.Src.Addr().String() != p.cliAddr || f.Dst.Addr().String() != p.srvAddr {
				t.Errorf("flow addresses %v → %v, want %s → %s", f.Src, f.Dst, p.cliAddr, p.srvAddr)
			}
		} else if f.Src.Addr().String() == p.cliAddr || f.Dst.Addr().String() == p.cliAddr {
			other += f.Segs
		} else {
			t.Logf("not this test's: %v → %v %d segments (other work on the host)", f.Src, f.Dst, f.Segs)
		}
	}
	t.Logf("traced %d segments on the flow (%d events, %d TLP), %d elsewhere; nstat TcpRetransSegs %v", flowSegs, rep.Retrans, rep.TLP, other, want)
	if math.Abs(float64(flowSegs)-want) > 0.1*want {
		t.Errorf("flow segments %d, nstat TcpRetransSegs %v: more than 10%% apart", flowSegs, want)
	}
	if other > 5 {
		t.Errorf("%d segments retransmitted on other flows, want a handful at most", other)
	}
	// The trace is host-wide: other work on the host (in CI, other test
	// packages; loopback retransmits under load) retransmits too, so which
	// flow leads depends on what else runs. What holds whatever runs: the
	// flows are ranked by segments, and the test's flows carry their share
	// of every segment the tracer saw.
	var share float64
	for k, f := range rep.Flows {
		if ports[int(f.Src.Port())] {
			share += f.SharePct
		}
		if k > 0 && f.Segs > rep.Flows[k-1].Segs {
			t.Errorf("flow %d has %d segments, more than the flow ranked above it (%d)", k, f.Segs, rep.Flows[k-1].Segs)
		}
	}
	t.Logf("the test's flows have %.1f%% of the host's retransmitted segments", share)
	if wantShare := 100 * float64(flowSegs) / float64(rep.Segs); math.Abs(share-wantShare) > 0.01 {
		t.Errorf("the test's flows' shares sum to %.2f%%, want %d of %d segments = %.2f%%", share, flowSegs, rep.Segs, wantShare)
	}
}

// blast writes as fast as it can over n connections for d and returns their
// local ports. Several connections keep packets flowing while one of them
// waits out a retransmission timeout.
func blast(t testing.TB, n int, d time.Duration, dial func() net.Conn) map[int]bool {
	t.Helper()
	ports := map[int]bool{}
	errc := make(chan error, n)
	end := time.Now().Add(d)
	for i := 0; i < n; i++ {
		c := dial()
		ports[c.LocalAddr().(*net.TCPAddr).Port] = true
		go func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for time.Now().Before(end) {
				if _, err := c.Write(buf); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	return ports
}
