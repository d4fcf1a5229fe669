package snapshot

import (
	"errors"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/safchain/ethtool"
	"golang.org/x/sys/unix"
)

func TestNetMetal(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectIRQ, collectNet)
	eth := nicNamed(s, "eth0")
	if eth == nil {
		t.Fatalf("eth0 missing: %+v", s.Net.Interfaces)
	}
	wantEq(t, "driver", eth.Driver, "i40e")
	wantEq(t, "pci", eth.PCI, "0000:af:00.0")
	wantEq(t, "virtual", eth.Virtual, false)
	wantEq(t, "speed", eth.SpeedMbps, int64(25000))
	wantEq(t, "mtu", eth.MTU, int64(1500))
	wantEq(t, "numa node", eth.NUMANode, 1)
	wantEq(t, "operstate", eth.OperState, "up")
	wantEq(t, "rx queues", len(eth.RxQueues), 8)
	wantEq(t, "tx queues", len(eth.TxQueues), 8)
	wantEq(t, "rx-7 name", eth.RxQueues[7].Name, "rx-7")
	for _, q := range eth.RxQueues {
		wantEq(t, q.Name+" rps", q.RPS, "00")
	}
	wantEq(t, "tx-3 xps", eth.TxQueues[3].XPS, "08")
	// msi_irqs gives the misc vector too; names give the 8 queue vectors.
	wantEq(t, "irqs", eth.IRQs, []int{100, 101, 102, 103, 104, 105, 106, 107, 108})

	lo := nicNamed(s, "lo")
	wantEq(t, "lo virtual", lo.Virtual, true)
	wantEq(t, "lo irqs", lo.IRQs, []int(nil))
	wantEq(t, "lo numa", lo.NUMANode, -1)
	wantEq(t, "lo speed", lo.SpeedMbps, int64(-1))

	wantMissing(t, s, "net.interfaces[eth0].channels", "live host")
	wantMissing(t, s, "net.interfaces[eth0].rings", "live host")
	if r := s.Missing("net.interfaces[lo].channels"); r != "" {
		t.Errorf("ethtool is not asked about virtual lo, but lo.channels is unavailable: %s", r)
	}

	ct := s.Net.Conntrack
	wantEq(t, "conntrack loaded", ct.Loaded, true)
	wantEq(t, "conntrack count", ct.Count, int64(241877))
	wantEq(t, "conntrack max", ct.Max, int64(262144))
	wantEq(t, "conntrack buckets", ct.Buckets, int64(65536))
	wantEq(t, "netfilter modules", ct.Netfilter, []string{"nf_conntrack", "nf_defrag_ipv4", "nf_defrag_ipv6"})

	wantEq(t, "sockets", s.Net.Sockets, SocketStat{TCPInUse: 2411, TCPTimeWait: 18734, TCPAlloc: 2603})
}

func TestNetIRQsByNameWithoutMSIDir(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/msi_irqs": fixture.Delete})
	s := runAreas(t, fs, Options{}, collectIRQ, collectNet)
	wantEq(t, "irqs from i40e-eth0-TxRx-N names", nicNamed(s, "eth0").IRQs, []int{101, 102, 103, 104, 105, 106, 107, 108})
}

func TestNetKVMVirtio(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectIRQ, collectNet)
	eth := nicNamed(s, "eth0")
	if eth == nil {
		t.Fatal("kvm eth0 missing")
	}
	wantEq(t, "driver", eth.Driver, "virtio_net")
	wantEq(t, "pci of the virtio device", eth.PCI, "0000:00:03.0")
	// virtio2-config, -input.0, -output.0: by msi_irqs and by virtio2- names.
	wantEq(t, "irqs", eth.IRQs, []int{37, 38, 39})
	wantEq(t, "single tx queue has no xps", eth.TxQueues[0].XPS, "")
	wantPresent(t, s, "net.interfaces[eth0].rx_queues")
	// No /proc/modules on this kernel: netfilter modules come from /sys/module.
	if len(s.Net.Conntrack.Netfilter) == 0 || s.Net.Conntrack.Netfilter[0] != "nf_conntrack" {
		t.Errorf("netfilter modules from /sys/module = %v", s.Net.Conntrack.Netfilter)
	}
}

func TestNetUnavailable(t *testing.T) {
	t.Parallel()
	fs := tree(t, "metal", map[string]string{
		"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/numa_node": fixture.Delete,
		"/proc/net/sockstat":                         fixture.Delete,
		"/proc/sys/net/netfilter/nf_conntrack_count": fixture.Delete,
	})
	s := runAreas(t, fs, Options{}, collectIRQ, collectNet)
	wantEq(t, "numa node", nicNamed(s, "eth0").NUMANode, -1)
	wantMissing(t, s, "net.interfaces[eth0].numa_node", "numa_node does not exist")
	wantMissing(t, s, "net.sockets", "sockstat")
	wantMissing(t, s, "net.conntrack.count", "nf_conntrack_count")
	wantPresent(t, s, "net.conntrack.max")

	fs = tree(t, "metal", map[string]string{"/sys/class/net": fixture.Delete})
	s = runAreas(t, fs, Options{}, collectNet)
	wantMissing(t, s, "net.interfaces", "/sys/class/net does not exist")
}

func TestConntrackNotLoaded(t *testing.T) {
	t.Parallel()
	fs := tree(t, "kvm", map[string]string{
		"/proc/sys/net/netfilter": fixture.Delete,
		"/sys/module":             fixture.Delete,
	})
	s := runAreas(t, fs, Options{}, collectConntrack)
	wantEq(t, "loaded", s.Net.Conntrack.Loaded, false)
	if r := s.Missing("net.conntrack.count"); r != "" {
		t.Errorf("an unloaded conntrack has no count to miss, got %q", r)
	}
	wantMissing(t, s, "net.conntrack.netfilter_modules", "/sys/module")
}

func TestIRQServesNIC(t *testing.T) {
	for _, c := range []struct {
		actions, name, pci, virtio string
		want                       bool
	}{
		{"eth0-TxRx-3", "eth0", "", "", true},
		{"eth10-TxRx-3", "eth1", "", "", false},
		{"i40e-eth0-TxRx-0", "eth0", "", "", true},
		{"i40e-eth01-TxRx-0", "eth0", "", "", false},
		{"eth0", "eth0", "", "", true},
		{"mlx5_comp3@pci:0000:03:00.0", "ens1f0", "0000:03:00.0", "", true},
		{"mlx5_comp3@pci:0000:03:00.1", "ens1f0", "0000:03:00.0", "", false},
		{"virtio2-input.0", "eth0", "", "virtio2", true},
		{"virtio20-input.0", "eth0", "", "virtio2", false},
		{"ehci_hcd:usb1, eth0-rx-0", "eth0", "", "", true},
		{"", "eth0", "", "", false},
		{"timer", "", "", "", false},
	} {
		if got := irqServesNIC(c.actions, c.name, c.pci, c.virtio); got != c.want {
			t.Errorf("irqServesNIC(%q, %q, %q, %q) = %v, want %v", c.actions, c.name, c.pci, c.virtio, got, c.want)
		}
	}
}

func TestPCIAddress(t *testing.T) {
	for in, want := range map[string]string{
		"/sys/devices/pci0000:00/0000:00:03.0/virtio2":            "0000:00:03.0",
		"/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0":       "0000:af:00.0",
		"/sys/devices/virtual/net/lo":                             "",
		"/sys/devices/platform/soc/1c30000.ethernet":              "",
		"/sys/devices/pci0000:00/0000:00:1c.0/0000:02:00.0/usb3/": "0000:02:00.0",
	} {
		wantEq(t, "pciAddress("+in+")", pciAddress(in), want)
	}
}

// fakeEthtool answers like a driver would, or fails like one.
type fakeEthtool struct {
	ch     ethtool.Channels
	chErr  error
	ring   ethtool.Ring
	feats  map[string]bool
	closed bool
}

func (f *fakeEthtool) GetChannels(string) (ethtool.Channels, error) { return f.ch, f.chErr }
func (f *fakeEthtool) GetRing(string) (ethtool.Ring, error)         { return f.ring, nil }
func (f *fakeEthtool) Features(string) (map[string]bool, error)     { return f.feats, nil }
func (f *fakeEthtool) Close()                                       { f.closed = true }

func TestEthtoolQuery(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{})
	c := &collector{fs: tree(t, "metal", nil), s: s}
	dev := &fakeEthtool{
		ch:    ethtool.Channels{MaxCombined: 64, CombinedCount: 8},
		ring:  ethtool.Ring{RxMaxPending: 4096, TxMaxPending: 4096, RxPending: 512, TxPending: 512},
		feats: map[string]bool{"rx-gro": true, "rx-lro": false, "tx-nocache-copy": false},
	}
	q := &nicQuerier{dev: dev, open: true}
	nic := NIC{Name: "eth0"}
	q.query(c, &nic)
	q.close()
	wantEq(t, "channels", *nic.Channels, Channels{MaxCombined: 64, Combined: 8})
	wantEq(t, "rings", *nic.Rings, Rings{RxMax: 4096, TxMax: 4096, Rx: 512, Tx: 512})
	wantEq(t, "offloads keep only those of interest", nic.Offloads, map[string]bool{"rx-gro": true, "rx-lro": false})
	wantEq(t, "closed", dev.closed, true)

	dev.chErr = unix.EOPNOTSUPP
	nic = NIC{Name: "eth1"}
	q.query(c, &nic)
	if nic.Channels != nil {
		t.Error("channels set although the driver refused")
	}
	wantMissing(t, s, "net.interfaces[eth1].channels", "ethtool -l eth1: the driver does not support it")
	wantMissing(t, &Snapshot{Unavailable: map[string]string{"x": ethtoolReason("ethtool -g x", unix.EPERM)}}, "x", "run as root")
	if r := ethtoolReason("ethtool -k x", errors.New("boom")); r != "ethtool -k x: boom" {
		t.Errorf("reason = %q", r)
	}
}

// With /proc/modules parsed by the kernel collector, its list wins over
// /sys/module (which also names built-ins with parameters).
func TestConntrackModulesFromKernel(t *testing.T) {
	t.Parallel()
	setModules := func(c *collector) {
		c.s.Kernel.Modules = []string{"ip_tables", "nf_conntrack", "nfsd", "x_tables", "xt_conntrack", "i40e", "nft_chain_nat"}
	}
	s := runAreas(t, tree(t, "metal", nil), Options{}, setModules, collectConntrack)
	wantEq(t, "netfilter", s.Net.Conntrack.Netfilter, []string{"ip_tables", "nf_conntrack", "nft_chain_nat", "x_tables", "xt_conntrack"})
	wantEq(t, "loaded", s.Net.Conntrack.Loaded, true)
}
