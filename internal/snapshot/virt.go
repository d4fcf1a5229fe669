package snapshot

import (
	"strings"
)

// virt is how the host is virtualised: id is perflab's short name
// (host.virtualization: none, kvm, xen, vmware, hyperv, qemu, oracle,
// powervm, zvm, lpar, other); vendor, name and typ are what lscpu prints as
// "Hypervisor vendor", "Hypervisor" and "Virtualization type".
type virt struct{ id, vendor, name, typ string }

// dmiVirt maps DMI vendor/product substrings to hypervisors; clouds built
// on KVM (EC2 Nitro, GCE, OpenStack, Alibaba) count as kvm.
var dmiVirt = []struct{ needle, id, vendor string }{
	{"KVM", "kvm", "KVM"}, {"Amazon EC2", "kvm", "KVM"}, {"Google Compute Engine", "kvm", "KVM"},
	{"OpenStack", "kvm", "KVM"}, {"Alibaba Cloud ECS", "kvm", "KVM"}, {"QEMU", "qemu", ""},
	{"VMware", "vmware", "VMware"}, {"VMW", "vmware", "VMware"}, {"Xen", "xen", "Xen"},
	{"Microsoft Corporation Virtual Machine", "hyperv", "Microsoft"},
	{"innotek", "oracle", "Oracle"}, {"VirtualBox", "oracle", "Oracle"}, {"Parallels", "other", "Parallels"},
	{"BHYVE", "other", ""}, {"Bochs", "other", ""},
}

// pciVirt maps PCI vendor:device ids of paravirtual devices to hypervisors,
// for guests without DMI (lscpu looks for the same devices):
// VirtualBox's guest service and VMware's VMCI.
var pciVirt = map[string]struct{ id, vendor string }{
	"80eecafe": {"oracle", "Oracle"},
	"15ad0740": {"vmware", "VMware"},
}

// virtualization judges the hypervisor from files only (no CPUID, no
// systemd-detect-virt), so a captured tree is judged like the live host.
// The sources, in lscpu's order of trust: the Xen hypervisor node; on s390
// /proc/sysinfo (the innermost level, VM00, names the control program
// the guest runs under: z/VM, KVM/Linux; only LPAR lines mean PR/SM); on
// POWER the device tree (ibm,partition-name with hmc-managed? is a PowerVM
// LPAR, hypervisor/compatible linux,kvm a KVM guest); DMI vendor strings;
// PCI ids of paravirtual devices; and last the cpuinfo "hypervisor" flag
// with the paravirtual clocksources telling the hypervisors apart.
func virtualization(c *collector) virt {
	if t, err := c.fs.ReadString("/sys/hypervisor/type"); err == nil && t == "xen" {
		return virt{id: "xen", vendor: "Xen"}
	}
	if v, ok := s390Virt(c); ok {
		return v
	}
	if v, ok := powerVirt(c); ok {
		return v
	}
	var dmi []string
	for _, f := range []string{"sys_vendor", "product_name", "bios_vendor", "board_vendor"} {
		if v, err := c.fs.ReadString("/sys/class/dmi/id/" + f); err == nil {
			dmi = append(dmi, v)
		}
	}
	joined := strings.Join(dmi, " ")
	avail, _ := c.fs.ReadString("/sys/devices/system/clocksource/clocksource0/available_clocksource")
	for _, d := range dmiVirt {
		if strings.Contains(joined, d.needle) {
			// QEMU's DMI is the same with and without KVM acceleration;
			// the paravirtual clock exists only with KVM.
			if d.id == "qemu" && strings.Contains(avail, "kvm-clock") {
				return virt{id: "kvm", vendor: "KVM", typ: "full"}
			}
			v := virt{id: d.id, vendor: d.vendor}
			if d.vendor != "" {
				v.typ = "full"
			}
			return v
		}
	}
	if v, ok := pciDeviceVirt(c); ok {
		return v
	}
	ci := c.cpuInfo()
	if ci.err != nil {
		// Without cpuinfo an absent DMI match proves nothing.
		c.miss("host.virtualization", "no DMI match and "+readReason("/proc/cpuinfo", ci.err))
		return virt{}
	}
	if !ci.hasFlag("hypervisor") {
		return virt{id: "none"}
	}
	// Guests see their hypervisor's paravirtual clock even when another
	// clocksource is in use.
	switch {
	case strings.Contains(avail, "kvm-clock"):
		return virt{id: "kvm", vendor: "KVM", typ: "full"}
	case strings.Contains(avail, "xen"):
		return virt{id: "xen", vendor: "Xen"}
	case strings.Contains(avail, "hyperv"):
		return virt{id: "hyperv", vendor: "Microsoft", typ: "full"}
	}
	return virt{id: "other"}
}

// s390Virt reads /proc/sysinfo (s390 only).
func s390Virt(c *collector) (virt, bool) {
	data, err := c.fs.ReadFile("/proc/sysinfo")
	if err != nil {
		return virt{}, false
	}
	lpar := false
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		switch {
		case k == "VM00 Control Program":
			switch {
			case strings.HasPrefix(v, "KVM"):
				return virt{id: "kvm", vendor: "KVM", name: v, typ: "full"}, true
			case strings.HasPrefix(v, "z/VM"):
				return virt{id: "zvm", vendor: "IBM", name: v, typ: "full"}, true
			}
			return virt{id: "other", vendor: "IBM", name: v, typ: "full"}, true
		case strings.HasPrefix(k, "LPAR "):
			lpar = true
		}
	}
	if lpar {
		return virt{id: "lpar", vendor: "IBM", name: "PR/SM", typ: "full"}, true
	}
	return virt{}, false
}

// powerVirt reads the POWER device tree under /proc/device-tree.
func powerVirt(c *collector) (virt, bool) {
	const dt = "/proc/device-tree/"
	if compat, err := c.fs.ReadString(dt + "hypervisor/compatible"); err == nil && strings.Contains(compat, "linux,kvm") {
		return virt{id: "kvm", vendor: "KVM", typ: "para"}, true
	}
	if c.fs.Exists(dt+"ibm,partition-name") && c.fs.Exists(dt+"hmc-managed?") && !c.fs.Exists(dt+"chosen/qemu,graphic-width") {
		return virt{id: "powervm", vendor: "pHyp", typ: "para"}, true
	}
	return virt{}, false
}

// pciDeviceVirt looks for paravirtual devices in /proc/bus/pci/devices,
// whose second column is the vendor and device id in hex.
func pciDeviceVirt(c *collector) (virt, bool) {
	data, err := c.fs.ReadFile("/proc/bus/pci/devices")
	if err != nil {
		return virt{}, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if v, ok := pciVirt[strings.ToLower(f[1])]; ok {
			return virt{id: v.id, vendor: v.vendor, typ: "full"}, true
		}
	}
	return virt{}, false
}
