package snapshot

import (
	"sort"
	"strings"
)

const conntrackDir = "/proc/sys/net/netfilter/"

// collectConntrack records whether connection tracking is active and how
// full its table is. nf_conntrack_max exists only while nf_conntrack is
// loaded (or built in), which also covers kernels without /proc/modules.
//
// "Not loaded" needs evidence too: a module list (/proc/modules or
// /sys/module) without nf_conntrack, or a /proc/sys/net without its
// sysctls. A captured tree with neither says nothing, and net.conntrack.loaded
// is then unavailable rather than false.
func collectConntrack(c *collector) {
	ct := &c.s.Net.Conntrack
	mods, modsKnown := netfilterModules(c)
	ct.Netfilter = mods
	ct.Loaded = c.fs.Exists(conntrackDir + "nf_conntrack_max")
	for _, m := range mods {
		if m == "nf_conntrack" {
			ct.Loaded = true
		}
	}
	if !ct.Loaded {
		if !modsKnown && !c.fs.Exists("/proc/sys/net") {
			c.miss("net.conntrack.loaded", "no evidence either way: no module list (/proc/modules, /sys/module) and no /proc/sys/net under the root")
		}
		return
	}
	for _, f := range []struct {
		file, fact string
		dst        *int64
	}{
		{"nf_conntrack_count", "count", &ct.Count},
		{"nf_conntrack_max", "max", &ct.Max},
		{"nf_conntrack_buckets", "buckets", &ct.Buckets},
	} {
		v, err := c.fs.ReadInt(conntrackDir + f.file)
		if err != nil {
			c.missErr("net.conntrack."+f.fact, conntrackDir+f.file, err)
			continue
		}
		*f.dst = v
	}
}

// netfilterModules lists loaded netfilter modules: from the kernel
// collector's /proc/modules when it has them, else from /sys/module, which
// also names built-in modules that have parameters (a kernel without module
// support has no /proc/modules at all).
// known is false when neither list could be read.
func netfilterModules(c *collector) (mods []string, known bool) {
	names := c.s.Kernel.Modules
	if len(names) == 0 {
		ents, err := c.fs.ReadDir("/sys/module")
		if err != nil {
			c.missErr("net.conntrack.netfilter_modules", "/sys/module", err)
			return nil, false
		}
		for _, e := range ents {
			names = append(names, e.Name())
		}
	}
	var out []string
	for _, n := range names {
		if isNetfilterModule(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, true
}

func isNetfilterModule(n string) bool {
	for _, p := range []string{"nf_", "nft_", "xt_", "iptable_", "ip6table_", "ebtable_", "nfnetlink"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	switch n {
	case "x_tables", "ip_tables", "ip6_tables", "arp_tables", "ebtables":
		return true
	}
	return false
}
