#!/bin/bash
# mkkunpeng.sh — (re)build the host-area files of testdata/roots/kunpeng: a
# HiSilicon Kunpeng 920 (aarch64, TaiShan v110 cores, no SMT) server cut
# down to 8 CPUs in one socket with two NUMA nodes 0-3 and 4-7, running
# openEuler 22.03 with cppc_cpufreq (governor schedutil) and no cpuidle
# driver. It exists to prove that the aarch64 /proc/cpuinfo (CPU
# implementer/part, no "model name") and cmdline quirks parse.
#
# Derived from kvm/ like mkmetal.sh; run mkfixture.sh first.
#
# Usage: testdata/roots/mkkunpeng.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kvm=$here/kvm
dst=$here/kunpeng
# shellcheck source=synth.sh
. "$here/synth.sh"

rm -rf "$dst/sys/devices/system/cpu" "$dst/sys/devices/system/node" \
	"$dst/sys/devices/virtual/dmi" "$dst/sys/class/dmi"
mkdir -p "$dst"

# --- host -------------------------------------------------------------------------
w /etc/hostname perflab-kunpeng
w /etc/machine-id 0badc0de0badc0de0badc0de0badc0de
rm -f "$dst/etc/os-release"
w /etc/os-release 'NAME="openEuler"' 'VERSION="22.03 (LTS-SP3)"' 'ID="openEuler"' \
	'VERSION_ID="22.03"' 'PRETTY_NAME="openEuler 22.03 (LTS-SP3)"' 'ANSI_COLOR="0;31"' ''
w /proc/uptime "604800.12 4771234.98"
for f in sys_vendor bios_vendor board_vendor chassis_vendor; do
	w /sys/devices/virtual/dmi/id/$f Huawei
done
w /sys/devices/virtual/dmi/id/product_name "TaiShan 200 (Model 2280)"
mkdir -p "$dst/sys/class/dmi"
ln -s ../../devices/virtual/dmi/id "$dst/sys/class/dmi/id"

# --- cpu --------------------------------------------------------------------------------
: >"$dst/proc/cpuinfo"
for c in 0 1 2 3 4 5 6 7; do
	cat >>"$dst/proc/cpuinfo" <<EOF
processor	: $c
BogoMIPS	: 200.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm ssbs
CPU implementer	: 0x48
CPU architecture: 8
CPU variant	: 0x1
CPU part	: 0xd01
CPU revision	: 0

EOF
done

cpu=/sys/devices/system/cpu
w $cpu/online 0-7
w $cpu/possible 0-7
w $cpu/present 0-7
w $cpu/offline ""
w $cpu/isolated ""
w $cpu/kernel_max 1023
w $cpu/smt/control notsupported
w $cpu/smt/active 0
for c in 0 1 2 3 4 5 6 7; do
	n=$((c / 4)) b=$(((c / 4) * 4))
	[ "$c" -ne 0 ] && w $cpu/cpu$c/online 1
	topo $c 0 $c $n "$c" "0 1 2 3 4 5 6 7"
	cache $c 0 1 Data 64K 4 256 $c "$c"
	cache $c 1 1 Instruction 64K 4 256 $c "$c"
	cache $c 2 2 Unified 512K 8 1024 $c "$c"
	cache $c 3 3 Unified 32768K 16 32768 $n "$b $((b + 1)) $((b + 2)) $((b + 3))"
	mkdir -p "$dst$cpu/cpu$c"
	ln -s ../../node/node$n "$dst$cpu/cpu$c/node$n"
done

v=$cpu/vulnerabilities
for f in gather_data_sampling itlb_multihit l1tf mds meltdown mmio_stale_data \
	reg_file_data_sampling retbleed spec_rstack_overflow spectre_v2 srbds tsx_async_abort; do
	w $v/$f "Not affected"
done
w $v/spec_store_bypass "Mitigation: Speculative Store Bypass disabled via prctl"
w $v/spectre_v1 "Mitigation: __user pointer sanitization"

cur=(2600000 2600000 1400000 2600000 200000 2600000 2600000 1900000)
for c in 0 1 2 3 4 5 6 7; do
	p=$cpu/cpufreq/policy$c
	w $p/affected_cpus $c
	w $p/related_cpus $c
	w $p/cpuinfo_max_freq 2600000
	w $p/cpuinfo_min_freq 200000
	w $p/cpuinfo_transition_latency 10000
	w $p/scaling_available_governors "conservative ondemand userspace powersave performance schedutil "
	w $p/scaling_cur_freq "${cur[$c]}"
	w $p/scaling_driver cppc_cpufreq
	w $p/scaling_governor schedutil
	w $p/scaling_max_freq 2600000
	w $p/scaling_min_freq 200000
	w $p/scaling_setspeed "<unsupported>"
	ln -s ../cpufreq/policy$c "$dst$cpu/cpu$c/cpufreq"
done
w $cpu/cpuidle/current_driver none
w $cpu/cpuidle/current_governor menu
w $cpu/cpuidle/current_governor_ro menu
w $cpu/cpuidle/available_governors "ladder menu teo "

# --- NUMA and memory -----------------------------------------------------------------------
node=/sys/devices/system/node
for f in online possible has_cpu has_memory has_normal_memory; do w $node/$f 0-1; done
for n in 0 1; do
	b=$((n * 4))
	w $node/node$n/cpulist "$b-$((b + 3))"
	w $node/node$n/cpumap "$(mask $b $((b + 1)) $((b + 2)) $((b + 3)))"
	for c in $b $((b + 1)) $((b + 2)) $((b + 3)); do ln -s ../../cpu/cpu$c "$dst$node/node$n/cpu$c"; done
	for s in 2048kB 1048576kB 32768kB 64kB; do
		for f in nr_hugepages free_hugepages surplus_hugepages; do
			w $node/node$n/hugepages/hugepages-$s/$f 0
		done
	done
done
w $node/node0/distance "10 12"
w $node/node1/distance "12 10"
nodememinfo 0 66758992 60123344 0 0
nodememinfo 1 67108864 61002120 0 0
cp "$kvm/proc/meminfo" "$dst/proc/meminfo"
setkv /proc/meminfo MemTotal 133867856
setkv /proc/meminfo MemFree 121125464
setkv /proc/meminfo MemAvailable 127001232
setkv /proc/meminfo SwapTotal 4194300
setkv /proc/meminfo SwapFree 4194300
setkv /proc/meminfo AnonHugePages 1056768
mm=/sys/kernel/mm
rm -rf "$dst$mm"
mkdir -p "$dst/sys/kernel"
cp -r "$kvm$mm" "$dst$mm"
w $mm/transparent_hugepage/enabled "[always] madvise never"
w $mm/transparent_hugepage/defrag "always defer defer+madvise [madvise] never"

# --- kernel -----------------------------------------------------------------------------------
release=5.10.0-182.0.0.95.oe2203sp3.aarch64
w /proc/cmdline "BOOT_IMAGE=/vmlinuz-$release root=/dev/mapper/openeuler-root ro rd.lvm.lv=openeuler/root rd.lvm.lv=openeuler/swap video=VGA-1:640x480-32@60me cgroup_disable=files apparmor=0 crashkernel=1024M,high smmu.bypassdev=0x1000:0x17 smmu.bypassdev=0x1000:0x15 console=tty0"
cat >"$dst/proc/modules" <<'EOF'
hns3 274432 0 - Live 0x0000000000000000
hclge 278528 1 - Live 0x0000000000000000
hnae3 40960 3 hns3,hclge, Live 0x0000000000000000
hisi_sas_v3_hw 57344 2 - Live 0x0000000000000000
hisi_sas_main 57344 1 hisi_sas_v3_hw, Live 0x0000000000000000
sha2_ce 20480 0 - Live 0x0000000000000000
sha256_arm64 28672 1 sha2_ce, Live 0x0000000000000000
sha1_ce 20480 0 - Live 0x0000000000000000
ipmi_ssif 45056 0 - Live 0x0000000000000000
ipmi_msghandler 122880 1 ipmi_ssif, Live 0x0000000000000000
EOF
cs=/sys/devices/system/clocksource/clocksource0
w $cs/current_clocksource arch_sys_counter
w $cs/available_clocksource "arch_sys_counter "
rm -f "$dst/sys/kernel/debug/sched/preempt"

sysctls perflab-kunpeng $release "#1 SMP Sat Dec 30 13:16:24 CST 2023" aarch64
w /proc/sys/kernel/numa_balancing 1
w /proc/sys/kernel/random/boot_id 00000000-eeee-4fff-8000-111111111111

# --- load, limits, processes -------------------------------------------------------------
statlines 8 0
w /proc/loadavg "0.42 0.51 0.48 1/642 40122"
mkdir -p "$dst/proc/pressure"
cp "$kvm"/proc/pressure/* "$dst/proc/pressure/"
proccopy ff 0-7 00000003 0-1
# openEuler keeps libraries in /usr/lib64.
sed -i 's#/usr/lib/x86_64-linux-gnu/#/usr/lib64/#g; s#/lib/x86_64-linux-gnu/#/usr/lib64/#g' \
	"$dst"/proc/424[23]/maps "$dst"/proc/424[23]/environ

echo "mkkunpeng: $(find "$dst" -type f | wc -l) files in $dst"
