#!/bin/sh
# mkfixture.sh — (re)build testdata/roots/kvm from the running host.
#
# Copies the host-area files perflab's snapshot reads (host, CPU, power,
# memory, kernel, sysctl, load, limits, process) from / into
# testdata/roots/kvm. Files are copied with `cat` (proc and sys files report a
# size of 0 or 4096, so cp would copy nothing or garbage); /sys symlinks are
# recreated as the same relative links inside the tree. Only the hostname,
# machine-id, boot_id and random uuid are replaced, by fixed fake values.
#
# It overwrites only the paths listed here, so files other scripts add to the
# same tree (net, irq, block, cgroup, services) survive a re-run.
#
# Usage: sudo testdata/roots/mkfixture.sh [DEST]   (DEST defaults to kvm/)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dst=${1:-$here/kvm}
mkdir -p "$dst"

FAKE_HOSTNAME=perflab-kvm
FAKE_MACHINE_ID=0123456789abcdef0123456789abcdef
FAKE_BOOT_ID=00000000-1111-4222-8333-444444444444

# put SRC [DST]: copy one readable file's content.
put() {
	_out=$dst${2:-$1}
	mkdir -p "$(dirname "$_out")"
	if ! cat "$1" >"$_out" 2>/dev/null; then
		rm -f "$_out"
	fi
}

# write DST TEXT: a file with fixed content (redactions).
write() {
	mkdir -p "$(dirname "$dst$1")"
	printf '%s\n' "$2" >"$dst$1"
}

# link PATH: recreate a symlink with its (relative) target.
link() {
	_t=$(readlink "$1")
	case $_t in
	/*) echo "mkfixture: $1 -> $_t is absolute, skipped" >&2; return ;;
	esac
	mkdir -p "$(dirname "$dst$1")"
	rm -rf "$dst$1"
	ln -s "$_t" "$dst$1"
}

# putdir DIR: every readable regular file directly in DIR (not recursive).
# Write-only files (vm/drop_caches) cannot be read back and are skipped.
putdir() {
	for f in "$1"/*; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		case $(stat -c %A "$f") in
		?r*) put "$f" ;;
		esac
	done
}

# puttree DIR: putdir recursively.
puttree() {
	find "$1" -type d | while read -r d; do putdir "$d"; done
}

# --- host ---------------------------------------------------------------
write /etc/hostname "$FAKE_HOSTNAME"
write /etc/machine-id "$FAKE_MACHINE_ID"
if [ -L /etc/os-release ]; then
	link /etc/os-release
	put /usr/lib/os-release
else
	put /etc/os-release
fi
put /proc/uptime
for f in sys_vendor product_name bios_vendor board_vendor chassis_vendor; do
	put /sys/class/dmi/id/$f /sys/devices/virtual/dmi/id/$f
done
[ -L /sys/class/dmi/id ] && link /sys/class/dmi/id
put /sys/hypervisor/type
put /proc/1/cgroup

# --- cpu, power -----------------------------------------------------------
rm -rf "$dst/sys/devices/system/cpu" "$dst/sys/devices/system/node"
put /proc/cpuinfo
cpu=/sys/devices/system/cpu
for f in online possible present offline kernel_max isolated; do put $cpu/$f; done
putdir $cpu/smt
putdir $cpu/vulnerabilities
putdir $cpu/cpuidle
[ -d $cpu/intel_pstate ] && putdir $cpu/intel_pstate
[ -d $cpu/cpufreq ] && mkdir -p "$dst$cpu/cpufreq" && putdir $cpu/cpufreq
for p in $cpu/cpufreq/policy*; do [ -d "$p" ] && putdir "$p"; done
for c in $cpu/cpu[0-9]*; do
	put "$c/online"
	putdir "$c/topology"
	for i in "$c"/cache/index*; do [ -d "$i" ] && putdir "$i"; done
	for s in "$c"/cpuidle/state*; do [ -d "$s" ] && putdir "$s"; done
	[ -L "$c/cpufreq" ] && link "$c/cpufreq"
	for n in "$c"/node*; do [ -L "$n" ] && link "$n"; done
done
node=/sys/devices/system/node
for f in online possible has_cpu has_memory has_normal_memory; do put $node/$f; done
for n in $node/node[0-9]*; do
	for f in cpulist cpumap meminfo distance numastat; do put "$n/$f"; done
	for h in "$n"/hugepages/hugepages-*; do putdir "$h"; done
	for c in "$n"/cpu[0-9]*; do link "$c"; done
done

# --- memory ---------------------------------------------------------------
put /proc/meminfo
putdir /sys/kernel/mm/transparent_hugepage
putdir /sys/kernel/mm/transparent_hugepage/khugepaged
for h in /sys/kernel/mm/hugepages/hugepages-*; do putdir "$h"; done
put /sys/kernel/mm/ksm/run

# --- kernel ---------------------------------------------------------------
put /proc/cmdline
put /proc/modules
cs=/sys/devices/system/clocksource/clocksource0
put $cs/current_clocksource
put $cs/available_clocksource
put /sys/kernel/debug/sched/preempt

# --- sysctl ---------------------------------------------------------------
# kernel, vm and fs in full; net for the protocol-wide knobs only (the
# per-interface conf/ and neigh/ trees are many files of little interest).
rm -rf "$dst/proc/sys"
puttree /proc/sys/kernel
puttree /proc/sys/vm
for d in $(find /proc/sys/fs -mindepth 1 -maxdepth 1 -type d); do
	[ "$(basename "$d")" = binfmt_misc ] || puttree "$d"
done
putdir /proc/sys/fs
for d in core ipv4 ipv6 netfilter unix; do [ -d /proc/sys/net/$d ] && putdir /proc/sys/net/$d; done
for d in all default; do putdir /proc/sys/net/ipv4/conf/$d; done
# Reading vm.stat_refresh is an action (every CPU folds its counters), not
# a value; perflab skips it.
rm -f "$dst/proc/sys/vm/stat_refresh"
write /proc/sys/kernel/hostname "$FAKE_HOSTNAME"
write /proc/sys/kernel/random/boot_id "$FAKE_BOOT_ID"
write /proc/sys/kernel/random/uuid 55555555-6666-4777-8888-999999999999

# --- load, limits ---------------------------------------------------------
put /proc/stat
put /proc/loadavg
for r in cpu memory io; do put /proc/pressure/$r; done
put /proc/vmstat

# --- processes --------------------------------------------------------------
# Two real processes with clean environments, renumbered to fixed PIDs:
# 4242 (also proc/self, the "collecting process") and 4243, started with
# LD_PRELOAD of jemalloc when the host has it.
jemalloc=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n1 || true)
env -i PATH=/usr/bin:/bin sleep 60 &
p1=$!
if [ -n "$jemalloc" ]; then
	env -i PATH=/usr/bin:/bin LD_PRELOAD="$jemalloc" sleep 60 &
else
	env -i PATH=/usr/bin:/bin sleep 60 &
fi
p2=$!
sleep 0.3 # let the dynamic loader map the preloaded library

copyproc() {
	src=/proc/$1
	out=/proc/$2
	for f in cmdline comm environ limits maps smaps_rollup cgroup; do put "$src/$f" "$out/$f"; done
	# Renumber: the PID lines of status and the first field of stat.
	mkdir -p "$dst$out"
	sed -e "s/^\(Pid\|Tgid\|NSpid\|NStgid\):\t$1\$/\1:\t$2/" -e "s/^PPid:\t.*/PPid:\t1/" "$src/status" >"$dst$out/status"
	sed -e "s/^$1 /$2 /" "$src/stat" >"$dst$out/stat"
}
copyproc $p1 4242
copyproc $p2 4243
kill $p1 $p2 2>/dev/null || true
rm -f "$dst/proc/self"
ln -s 4242 "$dst/proc/self"

echo "mkfixture: $(find "$dst" -type f | wc -l) files in $dst"
