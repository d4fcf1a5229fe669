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
	go func() {
		defer close(done)
		rep, terr = Retrans(context.Background(), fs, RetransOptions{Duration: 5 * time.Second, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case <-done:
		t.Fatal(terr)
	}
	before := nstatRetrans(t, p.cli)
	c := dialIn(t, p.cli, p.srvAddr+":15201")
	cport := c.LocalAddr().(*net.TCPAddr).Port
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	time.Sleep(500 * time.Millisecond)
	after := nstatRetrans(t, p.cli)
	<-done
	if terr != nil {
		t.Fatal(terr)
	}
	want := after - before
	if want < 20 {
		t.Fatalf("only %v segments retransmitted in the client namespace: the loss did not work", want)
	}
	var flowSegs, other int
	for _, f := range rep.Flows {
		if f.Dst.Port() == 15201 && int(f.Src.Port()) == cport {
			flowSegs += f.Segs
			if f.Src.Addr().String() != p.cliAddr || f.Dst.Addr().String() != p.srvAddr {
				t.Errorf("flow addresses %v → %v, want %s → %s", f.Src, f.Dst, p.cliAddr, p.srvAddr)
			}
		} else {
			other += f.Segs
		}
	}
	t.Logf("traced %d segments on the flow (%d events, %d TLP), %d elsewhere; nstat TcpRetransSegs %v", flowSegs, rep.Retrans, rep.TLP, other, want)
	if math.Abs(float64(flowSegs)-want) > 0.1*want {
		t.Errorf("flow segments %d, nstat TcpRetransSegs %v: more than 10%% apart", flowSegs, want)
	}
	if other > 5 {
		t.Errorf("%d segments retransmitted on other flows, want a handful at most", other)
	}
	if len(rep.Flows) == 0 || rep.Flows[0].SharePct < 90 {
		t.Errorf("top flow share %+v, want the lossy flow with >90%%", rep.Flows)
	}
}
