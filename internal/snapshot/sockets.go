package snapshot

// collectSockets records TCP socket counts from /proc/net/sockstat.
func collectSockets(c *collector) {
	if !c.hasProc() {
		c.miss("net.sockets", "no /proc under the root")
		return
	}
	st, err := c.proc.NetSockstat()
	if err != nil {
		c.missErr("net.sockets", "/proc/net/sockstat", unwrapPathErr(err))
		return
	}
	for _, p := range st.Protocols {
		if p.Protocol != "TCP" {
			continue
		}
		c.s.Net.Sockets.TCPInUse = int64(p.InUse)
		if p.TW != nil {
			c.s.Net.Sockets.TCPTimeWait = int64(*p.TW)
		}
		if p.Alloc != nil {
			c.s.Net.Sockets.TCPAlloc = int64(*p.Alloc)
		}
		return
	}
	c.miss("net.sockets", "/proc/net/sockstat has no TCP line")
}
