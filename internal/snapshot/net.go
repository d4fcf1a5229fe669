package snapshot

import (
	"errors"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/procfs/sysfs"
	"golang.org/x/sys/unix"
)

// collectNet records every interface of /sys/class/net (listed and its
// attributes parsed by procfs's sysfs package) with what procfs does not read: driver, PCI
// address, NUMA node, rx/tx queues with their RPS/XPS masks, the IRQs that
// serve it, and on a live host its channels, rings and offloads through
// ethtool ioctls. Then connection tracking and socket counts.
func collectNet(c *collector) {
	collectInterfaces(c)
	collectConntrack(c)
	collectSockets(c)
}

func collectInterfaces(c *collector) {
	if !c.hasSys() {
		c.miss("net.interfaces", "no /sys under the root")
		return
	}
	names, err := c.sys.NetClassDevices()
	if err != nil {
		c.missErr("net.interfaces", "/sys/class/net", unwrapPathErr(err))
		return
	}
	sort.Strings(names)
	q := newNICQuerier(c)
	defer q.close()
	for _, name := range names {
		// procfs's NetClass would read all ~30 attributes of every
		// interface (on a host with hundreds of veths that dominates the
		// snapshot); its attribute parser is used for the three needed.
		ci := sysfs.NetClassIface{Name: name}
		ci.MTU = nicAttrInt(c, name, "mtu", "mtu")
		if v, ok := nicAttr(c, name, "operstate", "operstate"); ok {
			ci.OperState = v
		}
		ci.Speed = nicAttrInt(c, name, "speed", "speed_mbps")
		nic := nicFromClass(c, ci)
		nic.IRQs = nicIRQs(c, nic)
		if !nic.Virtual {
			q.query(c, &nic)
		}
		c.s.Net.Interfaces = append(c.s.Net.Interfaces, nic)
	}
}

// nicAttr reads /sys/class/net/NAME/FILE as procfs's
// ParseNetClassAttribute reads it (open, read, close instead of its
// stat-and-poller open): the errors procfs ignores (missing, permission,
// EINVAL from a down link's speed, unsupported, no data) leave the
// attribute unset; any other is recorded against fact.
func nicAttr(c *collector, name, file, fact string) (string, bool) {
	p := "/sys/class/net/" + name + "/" + file
	v, err := c.fs.ReadString(p)
	if err == nil {
		return v, true
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, fs.ErrInvalid) &&
		!errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.EINVAL) {
		c.missErr(ElemPath("net.interfaces", name, fact), p, err)
	}
	return "", false
}

// nicAttrInt is nicAttr of an integer attribute, parsed as procfs parses
// it (base prefixes allowed; a value that does not parse reads 0).
func nicAttrInt(c *collector, name, file, fact string) *int64 {
	s, ok := nicAttr(c, name, file, fact)
	if !ok {
		return nil
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		v = 0
	}
	return &v
}

func nicFromClass(c *collector, ci sysfs.NetClassIface) NIC {
	base := "/sys/class/net/" + ci.Name
	nic := NIC{
		Name:      ci.Name,
		OperState: ci.OperState,
		SpeedMbps: -1,
		NUMANode:  -1,
	}
	if ci.MTU != nil {
		nic.MTU = *ci.MTU
	}
	// speed reads EINVAL when the link is down or the driver cannot tell;
	// procfs then leaves it nil and so do we (-1).
	if ci.Speed != nil && *ci.Speed >= 0 {
		nic.SpeedMbps = *ci.Speed
	}
	if dev, err := c.fs.Resolve(base); err == nil {
		nic.Virtual = strings.HasPrefix(dev, "/sys/devices/virtual/")
	}
	if !nic.Virtual {
		nic.Driver, _ = c.fs.LinkBase(base + "/device/driver")
		if dev, err := c.nicDevice(ci.Name); err == nil {
			nic.PCI = pciAddress(dev)
		}
		nic.NUMANode = nicNUMANode(c, &nic)
	}
	nic.RxQueues, nic.TxQueues = nicQueues(c, ci.Name)
	return nic
}

var pciAddrRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`) })

// pciAddress returns the last PCI bus address in a device path: the NIC
// itself for a PCI NIC, or the PCI function a virtio device hangs off
// (/sys/devices/pci0000:00/0000:00:03.0/virtio2 → 0000:00:03.0).
func pciAddress(devPath string) string {
	addr := ""
	for _, el := range strings.Split(devPath, "/") {
		if pciAddrRE().MatchString(el) {
			addr = el
		}
	}
	return addr
}

// pciDir returns the sysfs directory of the NIC's PCI function.
func pciDir(c *collector, nic *NIC) string {
	if nic.PCI == "" {
		return ""
	}
	dev, err := c.nicDevice(nic.Name)
	if err != nil {
		return ""
	}
	i := strings.Index(dev, "/"+nic.PCI)
	if i < 0 {
		return ""
	}
	return dev[:i+1+len(nic.PCI)]
}

// nicNUMANode reads numa_node of the device, or of its PCI function when
// the device (virtio) has none. -1 means the platform does not say.
func nicNUMANode(c *collector, nic *NIC) int {
	p := "/sys/class/net/" + nic.Name + "/device/numa_node"
	n, err := c.fs.ReadInt(p)
	if err != nil && nic.PCI != "" {
		if d := pciDir(c, nic); d != "" {
			p = d + "/numa_node"
			n, err = c.fs.ReadInt(p)
		}
	}
	if err != nil {
		c.missErr(ElemPath("net.interfaces", nic.Name, "numa_node"), p, err)
		return -1
	}
	return int(n)
}

// nicQueues lists queues/rx-N and queues/tx-N in numeric order with their
// steering masks.
func nicQueues(c *collector, name string) (rx, tx []Queue) {
	dir := "/sys/class/net/" + name + "/queues"
	ents, err := c.fs.ReadDir(dir)
	if err != nil {
		c.missErr(ElemPath("net.interfaces", name, "rx_queues"), dir, err)
		c.missErr(ElemPath("net.interfaces", name, "tx_queues"), dir, err)
		return nil, nil
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, "rx-"):
			q := Queue{Name: n}
			rps := knobFile("net.interfaces[*].rx_queues[*].rps_cpus", name, n)
			if s, err := c.fs.ReadString(rps); err == nil {
				q.RPS = s
			} else if !errors.Is(err, fs.ErrNotExist) {
				c.missErr(ElemPath("net.interfaces", name, "rx_queues["+n+"].rps_cpus"), rps, err)
			}
			if v, err := c.fs.ReadInt(knobFile("net.interfaces[*].rx_queues[*].rps_flow_cnt", name, n)); err == nil {
				q.RPSFlowCnt = v
			}
			rx = append(rx, q)
		case strings.HasPrefix(n, "tx-"):
			q := Queue{Name: n}
			// xps_cpus reads ENOENT on a single-queue device: XPS has nothing
			// to choose between, so its absence is not a missing fact.
			xps := knobFile("net.interfaces[*].tx_queues[*].xps_cpus", name, n)
			if s, err := c.fs.ReadString(xps); err == nil {
				q.XPS = s
			} else if !errors.Is(err, fs.ErrNotExist) {
				c.missErr(ElemPath("net.interfaces", name, "tx_queues["+n+"].xps_cpus"), xps, err)
			}
			tx = append(tx, q)
		}
	}
	sortQueues(rx)
	sortQueues(tx)
	return rx, tx
}

func sortQueues(qs []Queue) {
	idx := func(n string) int {
		_, num, _ := strings.Cut(n, "-")
		i, err := strconv.Atoi(num)
		if err != nil {
			return 1 << 30
		}
		return i
	}
	sort.SliceStable(qs, func(i, j int) bool { return idx(qs[i].Name) < idx(qs[j].Name) })
}

// unwrapPathErr keeps the errno of a wrapped *fs.PathError so hostfs.Reason
// can say "does not exist" or "permission denied" instead of procfs's text.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return err
}
