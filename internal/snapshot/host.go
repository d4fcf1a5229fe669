package snapshot

import (
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/hostfs"
)

// collectHost records who the host is and what it runs on. Virtualisation
// is judged from files only (no CPUID, no systemd-detect-virt), so a
// captured tree is judged the same as the live host: the Xen hypervisor
// node, then DMI vendor strings, then the cpuinfo "hypervisor" flag with
// the paravirtual clocksources telling the hypervisors apart.
func collectHost(c *collector) {
	h := &c.s.Host

	if v, err := c.fs.ReadString("/proc/sys/kernel/hostname"); err == nil {
		h.Hostname = v
	} else if v, err2 := c.fs.ReadString("/etc/hostname"); err2 == nil {
		h.Hostname = v
	} else {
		c.missErr("host.hostname", "/proc/sys/kernel/hostname", err)
	}

	if v, err := c.fs.ReadString("/etc/machine-id"); err == nil {
		h.MachineID = v
	} else {
		c.missErr("host.machine_id", "/etc/machine-id", err)
	}
	if v, err := c.fs.ReadString("/proc/sys/kernel/random/boot_id"); err == nil {
		h.BootID = v
	} else {
		c.missErr("host.boot_id", "/proc/sys/kernel/random/boot_id", err)
	}

	// kernel.arch is the uname machine; older kernels lack it, and then
	// the shape of cpuinfo tells.
	if v, err := c.fs.ReadString("/proc/sys/kernel/arch"); err == nil && v != "" {
		h.Arch = v
	} else if a, why := c.cpuInfo().arch(); a != "" {
		h.Arch = a
	} else {
		c.miss("host.arch", why)
	}

	h.OS = osPrettyName(c)

	for _, f := range []struct {
		dst  *string
		file string
		fact string
	}{{&h.Vendor, "sys_vendor", "host.vendor"}, {&h.Product, "product_name", "host.product"}} {
		p := "/sys/class/dmi/id/" + f.file
		if v, err := c.fs.ReadString(p); err == nil {
			*f.dst = v
		} else {
			c.missErr(f.fact, p, err)
		}
	}

	v := virtualization(c)
	h.Virtualization, h.HypervisorVendor, h.Hypervisor, h.VirtualizationType = v.id, v.vendor, v.name, v.typ
	h.Container = container(c)

	if v, err := c.fs.ReadString("/proc/uptime"); err == nil {
		up, _, _ := strings.Cut(v, " ")
		if h.UptimeSeconds, err = strconv.ParseFloat(up, 64); err != nil {
			c.miss("host.uptime_seconds", "/proc/uptime: "+err.Error())
		}
	} else {
		c.missErr("host.uptime_seconds", "/proc/uptime", err)
	}
}

// osPrettyName is PRETTY_NAME of os-release(5), which prefers /etc over
// /usr/lib.
func osPrettyName(c *collector) string {
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		data, err := c.fs.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
				return unquoteShell(v)
			}
		}
		return ""
	}
	c.miss("host.os", "no /etc/os-release or /usr/lib/os-release")
	return ""
}

// unquoteShell removes the single or double quotes os-release values may
// carry (it is a shell-compatible assignment).
func unquoteShell(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`, "\\`", "`").Replace(v[1 : len(v)-1])
	}
	return v
}

// container names the container runtime the collection runs in, from the
// marker files runtimes leave ("" on a host). /.dockerenv and
// /run/.containerenv count only when / is an overlay: VM and bare-metal
// images built from container images keep those files on an ext4 or xfs
// root (this project's own CI VM has /.dockerenv).
func container(c *collector) string {
	if v, err := c.fs.ReadString("/run/systemd/container"); err == nil && v != "" {
		return normaliseContainer(v)
	}
	if cg, err := c.fs.ReadString("/proc/1/cgroup"); err == nil {
		switch {
		case strings.Contains(cg, "kubepods"):
			return "kubernetes"
		case strings.Contains(cg, "/docker/") || strings.Contains(cg, "/docker-"):
			return "docker"
		case strings.Contains(cg, "/lxc/") || strings.Contains(cg, "/lxc.payload"):
			return "lxc"
		case strings.Contains(cg, "containerd"):
			return "containerd"
		}
	}
	if !overlayRoot(c) {
		return ""
	}
	if c.fs.Exists("/.dockerenv") {
		return "docker"
	}
	if c.fs.Exists("/run/.containerenv") {
		return "podman"
	}
	return ""
}

// overlayRoot reports whether / is mounted from an overlay filesystem,
// per the last mount of "/" in /proc/self/mountinfo.
func overlayRoot(c *collector) bool {
	ms, err := readMountInfo(c, "/proc/self/mountinfo")
	if err != nil {
		return false
	}
	fstype := ""
	for _, m := range ms {
		if m.MountPoint == "/" {
			fstype = m.FSType
		}
	}
	return fstype == "overlay" || fstype == "fuse-overlayfs" || fstype == "aufs"
}

func normaliseContainer(v string) string {
	switch v {
	case "docker", "podman", "lxc", "kubernetes", "containerd":
		return v
	case "lxc-libvirt":
		return "lxc"
	}
	return "other"
}

// readReason is hostfs.Reason for use inside a longer sentence.
func readReason(p string, err error) string { return hostfs.Reason(p, err) }
