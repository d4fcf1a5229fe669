package snapshot

import (
	"errors"
	"fmt"

	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

// nicQuerier asks a NIC for what only the ethtool ioctl knows: channel
// (queue) counts, ring sizes and offload features. It needs the live host,
// so on a fixture or foreign root every NIC records "unavailable".
type nicQuerier struct {
	dev  ethtoolDev
	why  string // set when no query is possible at all
	open bool
}

// ethtoolDev is the part of *ethtool.Ethtool used, so tests can stand in.
type ethtoolDev interface {
	GetChannels(string) (ethtool.Channels, error)
	GetRing(string) (ethtool.Ring, error)
	Features(string) (map[string]bool, error)
	Close()
}

// newEthtool is replaced in tests.
var newEthtool = func() (ethtoolDev, error) { return ethtool.NewEthtool() }

func newNICQuerier(c *collector) *nicQuerier {
	if !c.fs.Live() {
		return &nicQuerier{why: "ethtool needs the live host (snapshot of " + c.s.Root + ")"}
	}
	d, err := newEthtool()
	if err != nil {
		return &nicQuerier{why: "ethtool socket: " + err.Error()}
	}
	return &nicQuerier{dev: d, open: true}
}

func (q *nicQuerier) close() {
	if q.open {
		q.dev.Close()
	}
}

// offloadsOfInterest are the kernel feature names (ethtool -k spells some
// differently) that change throughput or CPU cost per packet; the other
// ~60 features would bury them.
var offloadsOfInterest = []string{
	"rx-checksum", "tx-checksum-ip-generic", "tx-checksum-ipv4", "tx-checksum-ipv6",
	"tx-scatter-gather", "tx-tcp-segmentation", "tx-tcp6-segmentation",
	"tx-generic-segmentation", "tx-udp-segmentation", "rx-gro", "rx-gro-hw",
	"rx-lro", "rx-hashing", "rx-ntuple-filter", "rx-vlan-hw-parse",
}

func (q *nicQuerier) query(c *collector, nic *NIC) {
	fact := ElemPath("net.interfaces", nic.Name, "")
	if !q.open {
		for _, f := range []string{"channels", "rings", "offloads"} {
			c.miss(fact+"."+f, q.why)
		}
		return
	}
	if ch, err := q.dev.GetChannels(nic.Name); err == nil {
		nic.Channels = &Channels{
			MaxRx: int(ch.MaxRx), MaxTx: int(ch.MaxTx), MaxOther: int(ch.MaxOther), MaxCombined: int(ch.MaxCombined),
			Rx: int(ch.RxCount), Tx: int(ch.TxCount), Other: int(ch.OtherCount), Combined: int(ch.CombinedCount),
		}
	} else {
		c.miss(fact+".channels", ethtoolReason("ethtool -l "+nic.Name, err))
	}
	if r, err := q.dev.GetRing(nic.Name); err == nil {
		nic.Rings = &Rings{RxMax: int(r.RxMaxPending), TxMax: int(r.TxMaxPending), Rx: int(r.RxPending), Tx: int(r.TxPending)}
	} else {
		c.miss(fact+".rings", ethtoolReason("ethtool -g "+nic.Name, err))
	}
	if feats, err := q.dev.Features(nic.Name); err == nil {
		nic.Offloads = selectOffloads(feats)
	} else {
		c.miss(fact+".offloads", ethtoolReason("ethtool -k "+nic.Name, err))
	}
}

func selectOffloads(feats map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, k := range offloadsOfInterest {
		if v, ok := feats[k]; ok {
			out[k] = v
		}
	}
	return out
}

// ethtoolReason names the equivalent command so the reader can retry it.
func ethtoolReason(what string, err error) string {
	switch {
	case errors.Is(err, unix.EOPNOTSUPP):
		return what + ": the driver does not support it"
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return what + ": permission denied (run as root)"
	case errors.Is(err, unix.ENODEV):
		return what + ": no such device (interface went away?)"
	}
	return fmt.Sprintf("%s: %v", what, err)
}
