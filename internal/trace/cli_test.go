package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/trace"
)

// The done-when check through the command line: `perflab trace retrans
// --format json` (until Ctrl-C) during a transfer over a link losing 5 % of packets reports
// the flow's ports and about as many segments as nstat.
func TestRetransCLIJSON(t *testing.T) {
	testenv.RequireRoot(t)
	for _, tool := range []string{"nft", "nstat", "ip"} {
		testenv.RequireTool(t, tool)
	}
	fs, _ := hostfs.New("/")
	if err := trace.Ready(fs, trace.Needs{BTFTypes: []string{"btf_trace_tcp_retransmit_skb"}}); err != nil {
		testenv.Unavailable(t, "eBPF tracing: %v", err)
	}
	p := trace.NewLossyPair(t, 5)
	cns, cliAddr := p.Client()
	sns, saddr := p.Server()
	ln := trace.ListenIn(t, sns, saddr+":15202")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	base := trace.RawTPLinks("tcp_retransmit_skb")
	go func() {
		done <- cli.Execute(ctx, []string{"trace", "retrans", "-d", "0", "--format", "json"}, strings.NewReader(""), &stdout, &stderr)
	}()
	// Traced from the moment it attached until Ctrl-C (the context's end):
	// the window holds the whole transfer however slowly a loaded machine
	// loads the programs.
	trace.WaitRawTPLinks(t, "tcp_retransmit_skb", base)
	ports, want := trace.LossyTransfer(t, cns, 40, func() net.Conn { return trace.DialIn(t, cns, saddr+":15202") })
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep trace.RetransReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	var segs, other int
	for _, f := range rep.Flows {
		if f.Dst.Port() == 15202 && ports[int(f.Src.Port())] {
			segs += f.Segs
		} else if caddr := f.Src.Addr().String(); caddr == cliAddr {
			other += f.Segs
		}
	}
	t.Logf("JSON: %d segments on the flow, %d elsewhere; nstat %v", segs, other, want)
	if want < 20 || float64(segs) < 0.9*want || float64(segs) > 1.1*want {
		t.Errorf("flow segments %d vs nstat TcpRetransSegs %v: want within 10%% (and the loss to work)", segs, want)
	}
	if other > 5 {
		t.Errorf("%d segments on other flows", other)
	}
}
