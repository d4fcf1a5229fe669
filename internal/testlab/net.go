package testlab

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Dial connects from the controller namespace (as a client in the lab
// would). The socket is created on a thread switched into that namespace;
// once created it works from any thread.
func (l *Lab) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	return DialIn(ctx, "/run/netns/"+l.Ctl, network, addr)
}

// DialIn dials from the network namespace whose file is nsPath.
func DialIn(ctx context.Context, nsPath, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// A thread left in another namespace must not run other
		// goroutines: on any failure to switch back it stays locked and
		// dies with this goroutine.
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer unix.Close(orig)
		target, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("setns %s: %w", nsPath, err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// SetRate limits the host's link to mbit Mbit/s in both directions with a
// token bucket (tc tbf) on each end of its veth; 0 removes the limit.
func (h *Host) SetRate(ctx context.Context, mbit int) error {
	for _, end := range []struct{ ns, dev string }{{h.NS, "eth0"}, {h.lab.Ctl, h.ctlIf}} {
		if mbit <= 0 {
			_ = run(ctx, "ip", "netns", "exec", end.ns, "tc", "qdisc", "del", "dev", end.dev, "root")
			continue
		}
		// burst: at least rate/HZ (HZ ≤ 1000) and several 64 KiB GSO
		// segments, so the bucket, not its size, sets the rate.
		burst := max(mbit*1000*1000/8/250, 256*1024)
		if err := run(ctx, "ip", "netns", "exec", end.ns, "tc", "qdisc", "replace", "dev", end.dev, "root",
			"tbf", "rate", strconv.Itoa(mbit)+"mbit", "burst", strconv.Itoa(burst), "latency", "50ms"); err != nil {
			return err
		}
	}
	return nil
}

// nftTable is the host's nftables table for loss and cuts.
const nftTable = "perflab_testlab"

// SetLoss drops pct percent of the host's incoming and outgoing packets at
// random (nftables numgen random); 0 removes the rules.
func (h *Host) SetLoss(ctx context.Context, pct float64) error {
	if pct <= 0 {
		return h.nftReset(ctx)
	}
	// Loss is per wire packet, as on a real NIC: without this, veth hands
	// nftables 64 KiB GSO/GRO aggregates and 1% of those is far fewer
	// loss events than 1% of packets.
	if err := h.SetOffloads(ctx, false); err != nil {
		return err
	}
	per100k := int(pct * 1000)
	return h.nft(ctx, fmt.Sprintf("numgen random mod 100000 < %d drop", per100k))
}

// Cut drops every packet to and from the host (a cable pulled, without
// the link going down); Restore undoes Cut and SetLoss.
func (h *Host) Cut(ctx context.Context) error { return h.nft(ctx, "drop") }

// Restore removes the host's drop rules.
func (h *Host) Restore(ctx context.Context) error { return h.nftReset(ctx) }

// LinkDown takes the host's link down (from the controller side); LinkUp
// brings it back.
func (h *Host) LinkDown(ctx context.Context) error {
	return run(ctx, "ip", "netns", "exec", h.lab.Ctl, "ip", "link", "set", h.ctlIf, "down")
}

// LinkUp brings the host's link back up.
func (h *Host) LinkUp(ctx context.Context) error {
	return run(ctx, "ip", "netns", "exec", h.lab.Ctl, "ip", "link", "set", h.ctlIf, "up")
}

func (h *Host) nft(ctx context.Context, rule string) error {
	script := fmt.Sprintf(`table inet %[1]s
delete table inet %[1]s
table inet %[1]s {
	chain in { type filter hook input priority 0; policy accept; %[2]s; }
	chain out { type filter hook output priority 0; policy accept; %[2]s; }
}
`, nftTable, rule)
	return h.nftScript(ctx, script)
}

func (h *Host) nftReset(ctx context.Context) error {
	return h.nftScript(ctx, fmt.Sprintf("table inet %[1]s\ndelete table inet %[1]s\n", nftTable))
}

func (h *Host) nftScript(ctx context.Context, script string) error {
	c := h.Cmd(ctx, "nft", "-f", "-")
	c.Stdin = stringsReader(script)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nft in %s: %v: %s", h.Name, err, out)
	}
	return nil
}

// SetOffloads turns TSO, GSO and GRO on or off on both ends of the host's
// link (SetLoss turns them off).
func (h *Host) SetOffloads(ctx context.Context, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	for _, end := range []struct{ ns, dev string }{{h.NS, "eth0"}, {h.lab.Ctl, h.ctlIf}} {
		if err := run(ctx, "ip", "netns", "exec", end.ns, "ethtool", "-K", end.dev, "tso", v, "gso", v, "gro", v); err != nil {
			return err
		}
	}
	return nil
}
