#!/bin/bash
# mkmetal.sh — (re)build the host-area files of testdata/roots/metal: a
# 2-socket Intel Xeon (Cascade Lake) bare-metal server, 8 logical CPUs
# (2 sockets x 2 cores x 2 threads), NUMA nodes 0-3 and 4-7, intel_pstate
# active with governor powersave, turbo on, intel_idle with C1/C1E/C6,
# THP madvise, Debian 12 kernel 6.1 with its mitigations, clocksource tsc,
# a Dell PowerEdge.
#
# It derives the tree from kvm/ (run mkfixture.sh first): files whose format
# does not depend on the machine are copied, the rest are written in the
# formats of the real kvm files with values of such a server. It overwrites
# only the host-area paths, so files other scripts add to metal/ survive.
#
# Usage: testdata/roots/mkmetal.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kvm=$here/kvm
dst=$here/metal
# shellcheck source=synth.sh
. "$here/synth.sh"

rm -rf "$dst/sys/devices/system/cpu" "$dst/sys/devices/system/node" \
	"$dst/sys/devices/virtual/dmi" "$dst/sys/class/dmi"
mkdir -p "$dst"

# --- host -------------------------------------------------------------------
w /etc/hostname perflab-metal
w /etc/machine-id fedcba9876543210fedcba9876543210
mkdir -p "$dst/etc" "$dst/usr/lib"
cp "$kvm/usr/lib/os-release" "$dst/usr/lib/os-release"
rm -f "$dst/etc/os-release"
ln -s ../usr/lib/os-release "$dst/etc/os-release"
w /proc/uptime "1893204.55 14987611.20"
for f in sys_vendor bios_vendor board_vendor chassis_vendor; do
	w /sys/devices/virtual/dmi/id/$f "Dell Inc."
done
w /sys/devices/virtual/dmi/id/product_name "PowerEdge R640"
mkdir -p "$dst/sys/class/dmi"
ln -s ../../devices/virtual/dmi/id "$dst/sys/class/dmi/id"

# --- cpu ----------------------------------------------------------------------
# Socket-major numbering: socket s holds CPUs 4s..4s+3; core k of a socket
# has threads 4s+k and 4s+k+2.
flags="fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cdp_l3 invpcid_single intel_ppin ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm mpx rdt_a avx512f avx512dq rdseed adx smap clflushopt clwb intel_pt avx512cd avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local dtherm ida arat pln pts pku ospke avx512_vnni md_clear flush_l1d arch_capabilities"
vmxflags="vnmi preemption_timer posted_intr invvpid ept_x_only ept_ad ept_1gb flexpriority apicv tsc_offset vtpr mtf vapic ept vpid unrestricted_guest vapic_reg vid ple shadow_vmcs pml ept_mode_based_exec tsc_scaling"
bugs="spectre_v1 spectre_v2 spec_store_bypass swapgs taa itlb_multihit mmio_stale_data retbleed eibrs_pbrsb gds bhi"
mhz=(1200.000 3099.998 1199.872 2400.112 1200.000 1201.431 3899.004 1200.000)
: >"$dst/proc/cpuinfo.tmp"
for c in 0 1 2 3 4 5 6 7; do
	s=$((c / 4)) k=$((c % 2)) t=$(((c % 4) / 2))
	cat >>"$dst/proc/cpuinfo.tmp" <<EOF
processor	: $c
vendor_id	: GenuineIntel
cpu family	: 6
model		: 85
model name	: Intel(R) Xeon(R) Gold 6254 CPU @ 3.10GHz
stepping	: 7
microcode	: 0x5003604
cpu MHz		: ${mhz[$c]}
cache size	: 25344 KB
physical id	: $s
siblings	: 4
core id		: $k
cpu cores	: 2
apicid		: $((s * 64 + k * 2 + t))
initial apicid	: $((s * 64 + k * 2 + t))
fpu		: yes
fpu_exception	: yes
cpuid level	: 22
wp		: yes
flags		: $flags
vmx flags	: $vmxflags
bugs		: $bugs
bogomips	: 6200.00
clflush size	: 64
cache_alignment	: 64
address sizes	: 46 bits physical, 48 bits virtual
power management:

EOF
done
mv "$dst/proc/cpuinfo.tmp" "$dst/proc/cpuinfo"

cpu=/sys/devices/system/cpu
w $cpu/online 0-7
w $cpu/possible 0-7
w $cpu/present 0-7
w $cpu/offline ""
w $cpu/isolated ""
w $cpu/kernel_max 8191
w $cpu/smt/control on
w $cpu/smt/active 1
for c in 0 1 2 3 4 5 6 7; do
	s=$((c / 4)) k=$((c % 2)) b=$(((c / 4) * 4))
	[ "$c" -ne 0 ] && w $cpu/cpu$c/online 1
	topo $c $s $k $((s * 2 + k)) "$((b + k)) $((b + k + 2))" "$b $((b + 1)) $((b + 2)) $((b + 3))"
	cache $c 0 1 Data 32K 8 64 $((s * 2 + k)) "$((b + k)) $((b + k + 2))"
	cache $c 1 1 Instruction 32K 8 64 $((s * 2 + k)) "$((b + k)) $((b + k + 2))"
	cache $c 2 2 Unified 1024K 16 1024 $((s * 2 + k)) "$((b + k)) $((b + k + 2))"
	cache $c 3 3 Unified 25344K 11 36864 $s "$b $((b + 1)) $((b + 2)) $((b + 3))"
	mkdir -p "$dst$cpu/cpu$c"
	ln -s ../../node/node$s "$dst$cpu/cpu$c/node$s"
done

# --- power: vulnerabilities, cpufreq (intel_pstate), cpuidle (intel_idle) ----
v=$cpu/vulnerabilities
w $v/gather_data_sampling "Mitigation: Microcode"
w $v/itlb_multihit "KVM: Mitigation: Split huge pages"
w $v/l1tf "Not affected"
w $v/mds "Not affected"
w $v/meltdown "Not affected"
w $v/mmio_stale_data "Mitigation: Clear CPU buffers; SMT vulnerable"
w $v/reg_file_data_sampling "Not affected"
w $v/retbleed "Mitigation: Enhanced IBRS"
w $v/spec_rstack_overflow "Not affected"
w $v/spec_store_bypass "Mitigation: Speculative Store Bypass disabled via prctl"
w $v/spectre_v1 "Mitigation: usercopy/swapgs barriers and __user pointer sanitization"
w $v/spectre_v2 "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; PBRSB-eIBRS: SW sequence; BHI: SW loop, KVM: SW loop"
w $v/srbds "Not affected"
w $v/tsx_async_abort "Mitigation: TSX disabled"

w $cpu/intel_pstate/status active
w $cpu/intel_pstate/no_turbo 0
w $cpu/intel_pstate/max_perf_pct 100
w $cpu/intel_pstate/min_perf_pct 30
w $cpu/intel_pstate/num_pstates 29
w $cpu/intel_pstate/turbo_pct 32
w $cpu/intel_pstate/hwp_dynamic_boost 0
cur=(1200000 3099998 1199872 2400112 1200000 1201431 3899004 1200000)
for c in 0 1 2 3 4 5 6 7; do
	p=$cpu/cpufreq/policy$c
	w $p/affected_cpus $c
	w $p/related_cpus $c
	w $p/base_frequency 3100000
	w $p/cpuinfo_max_freq 4000000
	w $p/cpuinfo_min_freq 1200000
	w $p/cpuinfo_transition_latency 0
	w $p/energy_performance_available_preferences "default performance balance_performance balance_power power "
	w $p/energy_performance_preference balance_performance
	w $p/scaling_available_governors "performance powersave"
	w $p/scaling_cur_freq "${cur[$c]}"
	w $p/scaling_driver intel_pstate
	w $p/scaling_governor powersave
	w $p/scaling_max_freq 4000000
	w $p/scaling_min_freq 1200000
	w $p/scaling_setspeed "<unsupported>"
	ln -s ../cpufreq/policy$c "$dst$cpu/cpu$c/cpufreq"
done

w $cpu/cpuidle/current_driver intel_idle
w $cpu/cpuidle/current_governor menu
w $cpu/cpuidle/current_governor_ro menu
w $cpu/cpuidle/available_governors "ladder menu teo "
for c in 0 1 2 3 4 5 6 7; do
	cstate $c 0 POLL "CPUIDLE CORE POLL IDLE" 0 0
	cstate $c 1 C1 "MWAIT 0x00" 2 2
	cstate $c 2 C1E "MWAIT 0x01" 10 20
	cstate $c 3 C6 "MWAIT 0x20" 133 600
done

# --- NUMA and memory -----------------------------------------------------------
node=/sys/devices/system/node
for f in online possible has_cpu has_memory has_normal_memory; do w $node/$f 0-1; done
for n in 0 1; do
	b=$((n * 4))
	w $node/node$n/cpulist "$b-$((b + 3))"
	w $node/node$n/cpumap "$(mask $b $((b + 1)) $((b + 2)) $((b + 3)))"
	for c in $b $((b + 1)) $((b + 2)) $((b + 3)); do ln -s ../../cpu/cpu$c "$dst$node/node$n/cpu$c"; done
	w $node/node$n/hugepages/hugepages-2048kB/nr_hugepages 512
	w $node/node$n/hugepages/hugepages-2048kB/free_hugepages 256
	w $node/node$n/hugepages/hugepages-2048kB/surplus_hugepages 0
	w $node/node$n/hugepages/hugepages-1048576kB/nr_hugepages 0
	w $node/node$n/hugepages/hugepages-1048576kB/free_hugepages 0
	w $node/node$n/hugepages/hugepages-1048576kB/surplus_hugepages 0
done
w $node/node0/distance "10 21"
w $node/node1/distance "21 10"
nodememinfo 0 32675008 23511044 512 256
nodememinfo 1 33020156 24702296 512 256

cp "$kvm/proc/meminfo" "$dst/proc/meminfo"
setkv /proc/meminfo MemTotal 65695164
setkv /proc/meminfo MemFree 48213340
setkv /proc/meminfo MemAvailable 58812416
setkv /proc/meminfo SwapTotal 8388604
setkv /proc/meminfo SwapFree 8388604
setkv /proc/meminfo AnonHugePages 4194304
setkv /proc/meminfo HugePages_Total 1024
setkv /proc/meminfo HugePages_Free 512
setkv /proc/meminfo Hugetlb 2097152
mm=/sys/kernel/mm
rm -rf "$dst$mm"
mkdir -p "$dst/sys/kernel"
cp -r "$kvm$mm" "$dst$mm"
w $mm/transparent_hugepage/enabled "always [madvise] never"
w $mm/transparent_hugepage/defrag "always defer defer+madvise [madvise] never"
w $mm/hugepages/hugepages-2048kB/nr_hugepages 1024
w $mm/hugepages/hugepages-2048kB/free_hugepages 512

# --- kernel -----------------------------------------------------------------------
release=6.1.0-28-amd64
w /proc/cmdline "BOOT_IMAGE=/boot/vmlinuz-$release root=UUID=0f5e6d2c-8b1a-4c3e-9f7d-2a6b4c8e1d30 ro quiet"
cat >"$dst/proc/modules" <<'EOF'
nf_conntrack 188416 0 - Live 0x0000000000000000
nf_defrag_ipv6 24576 1 nf_conntrack, Live 0x0000000000000000
nf_defrag_ipv4 16384 1 nf_conntrack, Live 0x0000000000000000
intel_rapl_msr 20480 0 - Live 0x0000000000000000
intel_rapl_common 32768 1 intel_rapl_msr, Live 0x0000000000000000
skx_edac 28672 0 - Live 0x0000000000000000
nfit 73728 1 skx_edac, Live 0x0000000000000000
x86_pkg_temp_thermal 20480 0 - Live 0x0000000000000000
intel_powerclamp 20480 0 - Live 0x0000000000000000
coretemp 20480 0 - Live 0x0000000000000000
kvm_intel 380928 0 - Live 0x0000000000000000
kvm 1142784 1 kvm_intel, Live 0x0000000000000000
irqbypass 16384 1 kvm, Live 0x0000000000000000
dell_smbios 28672 0 - Live 0x0000000000000000
dcdbas 20480 1 dell_smbios, Live 0x0000000000000000
ipmi_si 81920 0 - Live 0x0000000000000000
ipmi_devintf 20480 0 - Live 0x0000000000000000
ipmi_msghandler 77824 2 ipmi_si,ipmi_devintf, Live 0x0000000000000000
i40e 552960 0 - Live 0x0000000000000000
megaraid_sas 180224 2 - Live 0x0000000000000000
libcrc32c 16384 1 nf_conntrack, Live 0x0000000000000000
EOF
cs=/sys/devices/system/clocksource/clocksource0
w $cs/current_clocksource tsc
w $cs/available_clocksource "tsc hpet acpi_pm "
rm -f "$dst/sys/kernel/debug/sched/preempt"

sysctls perflab-metal $release "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)" x86_64
w /proc/sys/kernel/numa_balancing 1
w /proc/sys/kernel/random/boot_id 00000000-aaaa-4bbb-8ccc-dddddddddddd

# --- load, limits, processes ----------------------------------------------------------
statlines 8 0
w /proc/loadavg "3.12 2.87 2.40 4/1203 98211"
mkdir -p "$dst/proc/pressure"
cp "$kvm"/proc/pressure/* "$dst/proc/pressure/"
proccopy ff 0-7 00000003 0-1

echo "mkmetal: $(find "$dst" -type f | wc -l) files in $dst"
