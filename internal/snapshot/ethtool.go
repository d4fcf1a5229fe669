package snapshot

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

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
var newEthtool = func() (ethtoolDev, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_IP)
	if err != nil {
		return nil, err
	}
	e, err := ethtool.NewEthtool()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return liveEthtool{e, fd}, nil
}

// liveEthtool is safchain's ethtool with the offload query replaced:
// its Features zeroes a fixed 1 MiB string buffer (room for 32,768 names)
// per call, which cost more CPU and page faults than every other NIC query
// of a snapshot together (docs/performance.md, "Snapshot + audit").
type liveEthtool struct {
	*ethtool.Ethtool
	fd int // the offload query's own socket
}

func (e liveEthtool) Features(name string) (map[string]bool, error) {
	return ethtoolFeatures(e.fd, name)
}

func (e liveEthtool) Close() {
	unix.Close(e.fd)
	e.Ethtool.Close()
}

// The ethtool ioctl's commands and string set (uapi/linux/ethtool.h).
const (
	ethtoolGStrings  = 0x1b
	ethtoolGSSetInfo = 0x37
	ethtoolGFeatures = 0x3a
	ethSSFeatures    = 4
	ethGStringLen    = 32
	maxFeatureNames  = 32768
)

// ethtoolFeatures answers `ethtool -k NAME` as safchain's Features does
// (feature name → active; a repeated name takes its last bit) with the
// same three ioctls, ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS and
// ETHTOOL_GFEATURES, on buffers sized by the NIC's feature count.
func ethtoolFeatures(fd int, name string) (map[string]bool, error) {
	var info struct { // struct ethtool_sset_info with room for one count
		cmd, reserved uint32
		mask          uint64
		count         [2]uint32
	}
	info.cmd, info.mask = ethtoolGSSetInfo, 1<<ethSSFeatures
	if err := ethtoolIoctl(fd, name, unsafe.Pointer(&info)); err != nil {
		return nil, err
	}
	n := int(info.count[0])
	if info.mask == 0 || n == 0 {
		return map[string]bool{}, nil
	}
	if n > maxFeatureNames {
		return nil, fmt.Errorf("%d feature names, more than %d", n, maxFeatureNames)
	}
	// struct ethtool_gstrings: cmd, string_set, len, then n names of 32 bytes
	strs := make([]uint32, 3+n*ethGStringLen/4)
	strs[0], strs[1], strs[2] = ethtoolGStrings, ethSSFeatures, uint32(n)
	if err := ethtoolIoctl(fd, name, unsafe.Pointer(&strs[0])); err != nil {
		return nil, err
	}
	names := unsafe.Slice((*byte)(unsafe.Pointer(&strs[3])), n*ethGStringLen)
	// struct ethtool_gfeatures: cmd, size, then size blocks of
	// {available, requested, active, never_changed}
	blocks := (n + 31) / 32
	feats := make([]uint32, 2+4*blocks)
	feats[0], feats[1] = ethtoolGFeatures, uint32(blocks)
	if err := ethtoolIoctl(fd, name, unsafe.Pointer(&feats[0])); err != nil {
		return nil, err
	}
	out := make(map[string]bool, n)
	for i := range n {
		b := names[i*ethGStringLen : (i+1)*ethGStringLen]
		if k := cString(b); k != "" {
			out[k] = feats[2+4*(i/32)+2]&(1<<(i%32)) != 0
		}
	}
	return out, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// ethtoolIoctl sends one SIOCETHTOOL request for the interface; data is
// the command's struct, kept alive across the call.
func ethtoolIoctl(fd int, name string, data unsafe.Pointer) error {
	var ifr struct { // struct ifreq: the name, then a pointer in a 24-byte union
		name [unix.IFNAMSIZ]byte
		data uintptr
		_    [16]byte
	}
	if len(name) >= unix.IFNAMSIZ {
		return unix.ENODEV
	}
	copy(ifr.name[:], name)
	ifr.data = uintptr(data)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(data)
	if errno != 0 {
		return errno
	}
	return nil
}

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
