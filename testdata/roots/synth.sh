# synth.sh — helpers sourced by mkmetal.sh and mkkunpeng.sh, which derive
# hosts we do not have from the kvm tree by editing real files and writing
# the kernel's own formats. Every format here is copied from a real file in
# kvm/ (or from the kernel's documented sysfs ABI); only the values change.
# shellcheck shell=bash

# w PATH TEXT...: write one file (TEXT lines joined by newlines).
w() {
	local p=$dst$1
	shift
	mkdir -p "$(dirname "$p")"
	printf '%s\n' "$@" >"$p"
}

# mask CPU...: the kernel's hex cpumask for nr_cpu_ids <= 32 (e.g. "0f").
mask() {
	local m=0 c
	for c in "$@"; do m=$((m | (1 << c))); done
	printf '%02x' "$m"
}

# list CPU...: the kernel's list form for CPUs given in ascending order.
list() {
	local out="" start=$1 prev=$1 c
	shift
	for c in "$@" ""; do
		if [ -n "$c" ] && [ "$c" -eq $((prev + 1)) ]; then
			prev=$c
			continue
		fi
		[ -n "$out" ] && out+=","
		if [ "$start" -eq "$prev" ]; then out+=$start; else out+="$start-$prev"; fi
		start=$c
		prev=$c
	done
	printf '%s' "$out"
}

# topo CPU PKG CORE CLUSTER "THREAD SIBLINGS" "PACKAGE CPUS"
topo() {
	local t=/sys/devices/system/cpu/cpu$1/topology
	# shellcheck disable=SC2086
	{
		w $t/physical_package_id "$2"
		w $t/core_id "$3"
		w $t/cluster_id "$4"
		w $t/die_id 0
		w $t/thread_siblings_list "$(list $5)"
		w $t/thread_siblings "$(mask $5)"
		w $t/core_cpus_list "$(list $5)"
		w $t/core_siblings_list "$(list $6)"
		w $t/package_cpus_list "$(list $6)"
	}
}

# cache CPU INDEX LEVEL TYPE SIZE WAYS SETS ID "SHARED CPUS"
cache() {
	local d=/sys/devices/system/cpu/cpu$1/cache/index$2
	w $d/level "$3"
	w $d/type "$4"
	w $d/size "$5"
	w $d/ways_of_associativity "$6"
	w $d/number_of_sets "$7"
	w $d/id "$8"
	w $d/coherency_line_size 64
	# shellcheck disable=SC2086
	w $d/shared_cpu_list "$(list $9)"
}

# cstate CPU N NAME DESC LATENCY RESIDENCY
cstate() {
	local d=/sys/devices/system/cpu/cpu$1/cpuidle/state$2
	w $d/name "$3"
	w $d/desc "$4"
	w $d/latency "$5"
	w $d/residency "$6"
	w $d/disable 0
	w $d/default_status enabled
}

# setkv FILE KEY VALUE: replace the number after "KEY:" in a meminfo-style
# file, keeping the column width the kernel printed it with.
setkv() {
	awk -v k="$2" -v v="$3" '
	{
		i = index($0, k ":")
		if (i > 0 && (i == 1 || substr($0, i - 1, 1) == " ")) {
			head = substr($0, 1, i + length(k))
			rest = substr($0, i + length(k) + 1)
			unit = ""
			if (rest ~ / kB$/) { unit = " kB"; rest = substr(rest, 1, length(rest) - 3) }
			$0 = head sprintf("%" length(rest) "d", v) unit
		}
		print
	}' "$dst$1" >"$dst$1.tmp" && mv "$dst$1.tmp" "$dst$1"
}

# nodememinfo NODE TOTAL_KIB FREE_KIB HP_TOTAL HP_FREE: the kvm node0
# meminfo with the node number and the headline values replaced.
nodememinfo() {
	local n=$1
	mkdir -p "$dst/sys/devices/system/node/node$n"
	local f=/sys/devices/system/node/node$n/meminfo
	sed -e "s/^Node 0 /Node $n /" "$kvm/sys/devices/system/node/node0/meminfo" >"$dst$f"
	setkv $f MemTotal "$2"
	setkv $f MemFree "$3"
	setkv $f MemUsed $(($2 - $3))
	setkv $f HugePages_Total "$4"
	setkv $f HugePages_Free "$5"
}

# statlines N STEAL: /proc/stat with N CPUs (fixed tick counts, STEAL
# ticks of steal per CPU) and the kvm tree's other lines.
statlines() {
	local n=$1 steal=$2 c u=0 sy=0 id=0 io=0 si=0 st=0 lines=""
	for ((c = 0; c < n; c++)); do
		local cu=$((1203456 + c * 1013)) csy=$((301234 + c * 211)) cid=$((18234567 - c * 977)) cio=$((1234 + c)) csi=$((4567 + c * 3))
		lines+="cpu$c $cu 120 $csy $cid $cio 0 $csi $steal 0 0"$'\n'
		u=$((u + cu)) sy=$((sy + csy)) id=$((id + cid)) io=$((io + cio)) si=$((si + csi)) st=$((st + steal))
	done
	{
		printf 'cpu  %d %d %d %d %d 0 %d %d 0 0\n' $u $((120 * n)) $sy $id $io $si $st
		printf '%s' "$lines"
		grep -v '^cpu' "$kvm/proc/stat"
	} >"$dst/proc/stat"
}

# proccopy CPUS_MASK CPUS_LIST MEMS_MASK MEMS_LIST: the kvm tree's
# processes with their CPU and memory masks edited. Only the host-area
# files are written; a cgroup file already in the tree (mkfixture-io.sh
# writes one for metal) is kept.
proccopy() {
	local p f
	for p in 4242 4243; do
		mkdir -p "$dst/proc/$p"
		for f in cmdline comm environ limits maps smaps_rollup stat status; do
			cp "$kvm/proc/$p/$f" "$dst/proc/$p/$f"
		done
		[ -f "$dst/proc/$p/cgroup" ] || cp "$kvm/proc/$p/cgroup" "$dst/proc/$p/cgroup"
		sed -i -e "s/^Cpus_allowed:.*/Cpus_allowed:\t$1/" \
			-e "s/^Cpus_allowed_list:.*/Cpus_allowed_list:\t$2/" \
			-e "s/^\(Mems_allowed:.*\),[0-9a-f]*\$/\1,$3/" \
			-e "s/^Mems_allowed_list:.*/Mems_allowed_list:\t$4/" "$dst/proc/$p/status"
	done
	rm -f "$dst/proc/self"
	ln -s 4242 "$dst/proc/self"
	mkdir -p "$dst/proc/1"
	[ -f "$dst/proc/1/cgroup" ] || cp "$kvm/proc/1/cgroup" "$dst/proc/1/cgroup"
}

# sysctls HOSTNAME RELEASE VERSION ARCH: the kvm tree's /proc/sys with the
# kernel identity replaced.
sysctls() {
	rm -rf "$dst/proc/sys"
	mkdir -p "$dst/proc"
	cp -r "$kvm/proc/sys" "$dst/proc/sys"
	w /proc/sys/kernel/hostname "$1"
	w /proc/sys/kernel/osrelease "$2"
	w /proc/sys/kernel/version "$3"
	w /proc/sys/kernel/arch "$4"
}
