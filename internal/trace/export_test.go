package trace

import (
	"net"
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

func Blast(t testing.TB, n int, d time.Duration, dial func() net.Conn) map[int]bool {
	return blast(t, n, d, dial)
}
