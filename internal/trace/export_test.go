package trace

import (
	"bytes"
	"net"
	"os"
	"testing"
	"time"
)

// Test helpers for the external (package trace_test) tests that drive the
// CLI.

type LossyPair = lossyPair

func NewLossyPair(t testing.TB, dropPct int) *LossyPair   { return newLossyPair(t, dropPct) }
func (p *LossyPair) Client() (ns, addr string)            { return p.cli, p.cliAddr }
func (p *LossyPair) Server() (ns, addr string)            { return p.srv, p.srvAddr }
func ListenIn(t testing.TB, ns, addr string) net.Listener { return listenIn(t, ns, addr) }
func DialIn(t testing.TB, ns, addr string) net.Conn       { return dialIn(t, ns, addr) }
func NstatRetrans(t testing.TB, ns string) float64        { return nstatRetrans(t, ns) }

func LossyTransfer(t testing.TB, ns string, minSegs float64, dial func() net.Conn) (map[int]bool, float64) {
	return lossyTransfer(t, ns, minSegs, dial)
}

// RawTPLinks counts this process's open eBPF links on the raw tracepoint
// tp (tp_btf programs) from /proc/self/fdinfo: a test waits on it to know a
// tracer running in a goroutine has attached, instead of sleeping.
func RawTPLinks(tp string) int {
	ents, _ := os.ReadDir("/proc/self/fdinfo")
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err == nil && bytes.Contains(b, []byte("link_type:\traw_tracepoint")) && bytes.Contains(b, []byte("tp_name:\t"+tp+"\n")) {
			n++
		}
	}
	return n
}

// WaitRawTPLinks waits until more than base links on tp are open.
func WaitRawTPLinks(t testing.TB, tp string, base int) {
	t.Helper()
	for start := time.Now(); RawTPLinks(tp) <= base; time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("the tracer did not attach to %s within 2 minutes", tp)
		}
	}
}
