package snapshot

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestHostKVM(t *testing.T) {
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectHost)
	wantEq(t, "hostname", s.Host.Hostname, "perflab-kvm")
	wantEq(t, "machine id", s.Host.MachineID, "0123456789abcdef0123456789abcdef")
	wantEq(t, "boot id", s.Host.BootID, "00000000-1111-4222-8333-444444444444")
	wantEq(t, "arch", s.Host.Arch, "x86_64")
	wantEq(t, "os", s.Host.OS, "Debian GNU/Linux 12 (bookworm)")
	// No DMI in a Firecracker guest: the hypervisor flag plus kvm-clock tell.
	wantEq(t, "virtualization", s.Host.Virtualization, "kvm")
	wantEq(t, "container", s.Host.Container, "")
	wantMissing(t, s, "host.vendor", "does not exist")
	wantMissing(t, s, "host.product", "does not exist")
	if s.Host.UptimeSeconds <= 0 {
		t.Errorf("uptime = %v, want > 0", s.Host.UptimeSeconds)
	}
}

func TestHostMetal(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectHost)
	wantEq(t, "vendor", s.Host.Vendor, "Dell Inc.")
	wantEq(t, "product", s.Host.Product, "PowerEdge R640")
	wantEq(t, "virtualization", s.Host.Virtualization, "none")
	wantEq(t, "uptime", s.Host.UptimeSeconds, 1893204.55)
	wantPresent(t, s, "host.vendor")
}

func TestHostKunpengArchFromCPUInfo(t *testing.T) {
	// Kernels before kernel.arch existed: the aarch64 cpuinfo shape tells.
	fs := overlay(t, "kunpeng", map[string]string{"/proc/sys/kernel/arch": fixture.Delete})
	s := runAreas(t, fs, Options{}, collectHost)
	wantEq(t, "arch", s.Host.Arch, "aarch64")
	wantEq(t, "os", s.Host.OS, "openEuler 22.03 (LTS-SP3)")
	wantEq(t, "virtualization", s.Host.Virtualization, "none")
	wantPresent(t, s, "host.arch")
}

func TestHostVirtualization(t *testing.T) {
	dmi := "/sys/class/dmi/id/"
	for _, tc := range []struct {
		name  string
		base  string
		edits map[string]string
		want  string
	}{
		{"vmware dmi", "metal", map[string]string{dmi + "sys_vendor": "VMware, Inc.\n", dmi + "product_name": "VMware7,1\n"}, "vmware"},
		{"ec2 is kvm", "metal", map[string]string{dmi + "sys_vendor": "Amazon EC2\n", dmi + "product_name": "m6i.large\n"}, "kvm"},
		{"hyperv", "metal", map[string]string{dmi + "sys_vendor": "Microsoft Corporation\n", dmi + "product_name": "Virtual Machine\n"}, "hyperv"},
		{"qemu with kvm", "kvm", map[string]string{dmi + "sys_vendor": "QEMU\n", dmi + "product_name": "Standard PC (Q35 + ICH9, 2009)\n"}, "kvm"},
		{"qemu without kvm", "metal", map[string]string{dmi + "sys_vendor": "QEMU\n"}, "qemu"},
		{"xen node", "metal", map[string]string{"/sys/hypervisor/type": "xen\n"}, "xen"},
		{"flag without known clock", "kvm", map[string]string{
			"/sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc acpi_pm \n"}, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runAreas(t, overlay(t, tc.base, tc.edits), Options{}, collectHost)
			wantEq(t, "virtualization", s.Host.Virtualization, tc.want)
		})
	}
}

func TestHostContainer(t *testing.T) {
	ovl := "1 0 0:52 / / rw,relatime master:1 - overlay overlay rw,lowerdir=/x,upperdir=/y,workdir=/z\n"
	ext4 := "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	for _, tc := range []struct {
		name  string
		edits map[string]string
		want  string
	}{
		{"systemd marker", map[string]string{"/run/systemd/container": "lxc-libvirt\n"}, "lxc"},
		{"kubepods cgroup", map[string]string{"/proc/1/cgroup": "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-0f.scope\n"}, "kubernetes"},
		{"dockerenv on overlay", map[string]string{"/.dockerenv": "", "/proc/4242/mountinfo": ovl}, "docker"},
		// A VM image built from a container image keeps /.dockerenv.
		{"dockerenv on ext4", map[string]string{"/.dockerenv": "", "/proc/4242/mountinfo": ext4}, ""},
		{"containerenv on overlay", map[string]string{"/run/.containerenv": "", "/proc/4242/mountinfo": ovl}, "podman"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runAreas(t, overlay(t, "kvm", tc.edits), Options{}, collectHost)
			wantEq(t, "container", s.Host.Container, tc.want)
		})
	}
}

func TestHostMissingFiles(t *testing.T) {
	fs := overlay(t, "kvm", map[string]string{
		"/proc/sys/kernel/hostname":       fixture.Delete,
		"/etc/machine-id":                 fixture.Delete,
		"/proc/sys/kernel/random/boot_id": fixture.Delete,
		"/proc/uptime":                    "garbage\n",
	})
	s := runAreas(t, fs, Options{}, collectHost)
	// /etc/hostname stands in for the kernel's.
	wantEq(t, "hostname", s.Host.Hostname, "perflab-kvm")
	wantMissing(t, s, "host.machine_id", "/etc/machine-id does not exist")
	wantMissing(t, s, "host.boot_id", "boot_id")
	wantMissing(t, s, "host.uptime_seconds", "/proc/uptime")
}

func TestUnquoteShell(t *testing.T) {
	for in, want := range map[string]string{
		`"Debian GNU/Linux 12 (bookworm)"`: "Debian GNU/Linux 12 (bookworm)",
		`'Fedora Linux 40'`:                "Fedora Linux 40",
		`Alpine`:                           "Alpine",
		`"say \"hi\""`:                     `say "hi"`,
		`"`:                                `"`,
	} {
		wantEq(t, "unquoteShell("+in+")", unquoteShell(in), want)
	}
}
