#!/bin/bash
# mkfixture-io.sh — (re)build the I/O-area files of the fixture trees: IRQs,
# network interfaces, conntrack, sockets, block devices, mounts, cgroup
# files, services and tools. mkfixture.sh and mkmetal.sh own the host-area
# files of the same trees.
#
#   kvm/    copied from this host with `cat` (proc and sys files report size
#           0 or 4096); /sys symlinks recreated as the same relative links.
#           Only loop0 of the eight idle loop devices is kept.
#   metal/  written in the formats of the real kvm files (and the kernel's
#           printf formats for /proc/interrupts) with the values of a Dell
#           R640: eth0 = Intel XXV710 (i40e, the driver mkmetal.sh loads) at
#           25000 Mb/s on NUMA node 1 with 8 queues, RPS off, its 8 IRQs
#           pinned to CPUs 0-3 (node 0: the wrong node) while irqbalance
#           runs; nf_conntrack 92% full; sda = PERC H730P virtual disk
#           (rotational, mq-deadline, write through); nvme0n1 (none, write
#           back); cgroup v2 with app.service limited to cpu.max
#           "200000 100000" and throttled; auditd running.
#
# Tools are empty executable placeholders at the paths where this host has
# them: the snapshot only looks tools up, it never runs them.
#
# Run it AFTER mkfixture.sh / mkmetal.sh: those rebuild proc/4242 and
# proc/sys wholesale, which removes the mountinfo, cgroup and netfilter
# files written here.
#
# Usage: sudo testdata/roots/mkfixture-io.sh [kvm|metal|all]   (default all)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kvm=$here/kvm
# shellcheck source=synth.sh
. "$here/synth.sh"

# put SRC [DST]: copy one readable file's content.
put() {
	local out=$dst${2:-$1}
	mkdir -p "$(dirname "$out")"
	if ! cat "$1" >"$out" 2>/dev/null; then
		rm -f "$out"
	fi
}

# link PATH: recreate a symlink with its (relative) target.
link() {
	local t
	t=$(readlink "$1")
	case $t in
	/*) echo "mkfixture-io: $1 -> $t is absolute, skipped" >&2; return ;;
	esac
	mkdir -p "$(dirname "$dst$1")"
	rm -rf "$dst$1"
	ln -s "$t" "$dst$1"
}

# putdir DIR: every readable regular file directly in DIR.
putdir() {
	local f
	for f in "$1"/*; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		case $(stat -c %A "$f") in
		?r*) put "$f" ;;
		esac
	done
}

# puttree DIR: putdir recursively (not following links).
puttree() {
	find "$1" -type d | while read -r d; do putdir "$d"; done
}

# pcidir PATH: the PCI function directory a device path hangs off.
pcidir() {
	printf '%s\n' "$1" | grep -oE '^.*/[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]' || true
}

# ============================ kvm: this host =================================
io_kvm() {
	dst=$kvm
	rm -rf "$dst/proc/irq" "$dst/proc/net" "$dst/sys/class/net" "$dst/sys/block" \
		"$dst/sys/module" "$dst/sys/fs/cgroup" "$dst/sys/devices/virtual/net" \
		"$dst/sys/devices/virtual/block" "$dst"/sys/devices/pci0000:*

	# --- IRQs ---
	put /proc/interrupts
	put /proc/irq/default_smp_affinity
	for d in /proc/irq/[0-9]*; do
		for f in smp_affinity smp_affinity_list effective_affinity effective_affinity_list node affinity_hint; do
			put "$d/$f"
		done
	done

	# --- network interfaces ---
	for l in /sys/class/net/*; do
		link "$l"
		dev=$(readlink -f "$l")
		putdir "$dev"
		puttree "$dev/queues"
		[ -L "$dev/device" ] || continue
		link "$dev/device"
		d=$(readlink -f "$dev/device")
		for f in vendor device numa_node; do put "$d/$f"; done
		[ -L "$d/driver" ] && link "$d/driver"
		p=$(pcidir "$d")
		[ -n "$p" ] || continue
		for f in vendor device class numa_node local_cpulist; do put "$p/$f"; done
		[ -d "$p/msi_irqs" ] && putdir "$p/msi_irqs"
		[ -L "$p/driver" ] && link "$p/driver"
	done

	# --- conntrack (netfilter sysctls are copied by mkfixture.sh) and sockets ---
	for m in /sys/module/nf_* /sys/module/nft_* /sys/module/xt_* /sys/module/ip_tables; do
		[ -d "$m" ] || continue
		putdir "$m"
		[ -d "$m/parameters" ] && putdir "$m/parameters"
	done
	put /proc/net/sockstat

	# --- block devices: the disks and zram, plus loop0 as an idle loop ---
	for b in /sys/block/*; do
		case ${b##*/} in loop[1-9]*) continue ;; esac
		link "$b"
		dev=$(readlink -f "$b")
		for f in size ro removable; do put "$dev/$f"; done
		putdir "$dev/queue"
		for q in "$dev"/mq/*; do [ -d "$q" ] && putdir "$q"; done
		if [ -L "$dev/device" ]; then
			link "$dev/device"
			d=$(readlink -f "$dev/device")
			for f in model vendor; do put "$d/$f"; done
		fi
	done

	# --- mounts: the fixture processes share this host's mount namespace ---
	for p in 4242 4243; do put /proc/self/mountinfo /proc/$p/mountinfo; done

	# --- cgroup (v1 hybrid here): the hierarchy roots and the fixture
	# process's own memory cgroup and its parent ---
	cg=/sys/fs/cgroup
	for f in cpu.cfs_quota_us cpu.cfs_period_us cpu.stat cpu.shares; do put $cg/cpu/$f; done
	for f in cpuset.cpus cpuset.mems cpuset.effective_cpus cpuset.effective_mems; do put $cg/cpuset/$f; done
	put $cg/memory/memory.limit_in_bytes
	for f in cgroup.controllers cgroup.subtree_control cpu.stat; do put $cg/unified/$f; done
	mem=$(sed -n 's/^[0-9]*:memory://p' "$dst/proc/4242/cgroup")
	if [ -n "$mem" ] && [ "$mem" != / ]; then
		src=$cg/memory$mem
		# The session cgroup the fixture was taken in may be gone; any
		# sibling has the same files.
		[ -d "$src" ] || src=$cg/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
		put "$src/memory.limit_in_bytes" "$cg/memory$mem/memory.limit_in_bytes"
		put "$(dirname "$src")/memory.limit_in_bytes" "$(dirname "$cg/memory$mem")/memory.limit_in_bytes"
	fi

	# --- services: comm of the watched daemons running here (none on the
	# CI guest; the two fixture processes are `sleep`) ---
	for p in /proc/[0-9]*; do
		c=$(cat "$p/comm" 2>/dev/null) || continue
		case $c in
		irqbalance | tuned | auditd | numad | ksmtuned | thermald | power-profiles-)
			put "$p/comm" "/proc/${p##*/}/comm"
			;;
		esac
	done

	# --- tools: placeholders where this host has them ---
	for t in sysbench fio wrk nginx redis-server redis-benchmark qperf iperf3 sockperf stress-ng perf mysqld mariadbd ethtool; do
		p=$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v "$t" || true)
		[ -n "$p" ] || continue
		mkdir -p "$dst$(dirname "$p")"
		: >"$dst$p"
		chmod 755 "$dst$p"
	done
	echo "mkfixture-io: kvm done"
}

# ====================== metal: 2-socket R640, written =========================

# irqline IRQ CHIP HWIRQ FLOW ACTION COUNT...: one numbered line of
# /proc/interrupts as kernel/irq/proc.c prints it (prec 4: nr_irqs >= 1000).
irqline() {
	local n=$1 chip=$2 hw=$3 flow=$4 act=$5 c
	shift 5
	printf '%*d: ' 4 "$n"
	for c in "$@"; do printf '%10u ' "$c"; done
	printf ' %8s %*s-%-8s  %s\n' "$chip" 4 "$hw" "$flow" "$act"
}

# archline NAME TEXT COUNT...: an architecture line (arch/x86/kernel/irq.c).
archline() {
	local name=$1 text=$2 c
	shift 2
	printf '%*s: ' 4 "$name"
	for c in "$@"; do printf '%10u ' "$c"; done
	printf '  %s\n' "$text"
}

# irqdir IRQ "CPU LIST" "EFFECTIVE CPU" NODE: /proc/irq/N for 8 CPUs.
irqdir() {
	local d=/proc/irq/$1
	# shellcheck disable=SC2086
	w $d/smp_affinity "$(mask $2)"
	# shellcheck disable=SC2086
	w $d/smp_affinity_list "$(list $2)"
	w $d/effective_affinity "$(mask "$3")"
	w $d/effective_affinity_list "$3"
	w $d/node "$4"
	w $d/affinity_hint 00
}

# on CPU COUNT: 8 per-CPU counts, COUNT on CPU and 0 elsewhere.
on() {
	local c
	for c in 0 1 2 3 4 5 6 7; do
		if [ "$c" -eq "$1" ]; then printf '%s ' "$2"; else printf '0 '; fi
	done
}

io_metal() {
	dst=$here/metal
	rm -rf "$dst/proc/irq" "$dst/proc/net" "$dst/sys/class/net" "$dst/sys/block" \
		"$dst/sys/module" "$dst/sys/fs/cgroup" "$dst/sys/devices/virtual/net" \
		"$dst/sys/devices/virtual/block" "$dst"/sys/devices/pci0000:* \
		"$dst/proc/1187" "$dst/proc/1254"

	all="0 1 2 3 4 5 6 7"
	# PCI functions: megaraid (node 0), the NIC and the NVMe drive (node 1).
	# MSI hwirq on x86 6.1 is pci_dev_id << 11 | vector.
	raid=pci0000:17/0000:17:00.0/0000:18:00.0
	nic=pci0000:ae/0000:ae:00.0/0000:af:00.0
	nvme=pci0000:ae/0000:ae:02.0/0000:b0:00.0
	hw_raid=$((0x1800 << 11)) hw_nic=$((0xaf00 << 11)) hw_nvme=$((0xb000 << 11))

	# --- /proc/interrupts and /proc/irq ---
	{
		printf '%*s' 12 ''
		for c in 0 1 2 3 4 5 6 7; do printf 'CPU%-8d' "$c"; done
		printf '\n'
		# shellcheck disable=SC2046
		{
			irqline 0 IR-IO-APIC 2 edge timer $(on 0 41)
			irqline 8 IR-IO-APIC 8 edge rtc0 $(on 0 1)
			irqline 9 IR-IO-APIC 9 fasteoi acpi $(on 2 0)
			irqline 24 DMAR-MSI 0 edge dmar0 $(on 0 0)
			irqline 25 DMAR-MSI 1 edge dmar1 $(on 4 0)
			irqline 40 IR-PCI-MSI $hw_raid edge megasas0-msix0 $(on 0 2231844)
			irqline 41 IR-PCI-MSI $((hw_raid + 1)) edge megasas0-msix1 $(on 1 1987310)
			irqline 60 IR-PCI-MSI $hw_nvme edge nvme0q0 $(on 4 52)
			for q in 1 2 3 4 5 6 7 8; do
				irqline $((60 + q)) IR-PCI-MSI $((hw_nvme + q)) edge nvme0q$q $(on $((q - 1)) $((812334 + q * 7919)))
			done
			irqline 100 IR-PCI-MSI $hw_nic edge "i40e-0000:af:00.0:misc" $(on 4 18)
			for q in 0 1 2 3 4 5 6 7; do
				irqline $((101 + q)) IR-PCI-MSI $((hw_nic + 1 + q)) edge "i40e-eth0-TxRx-$q" $(on $((q % 4)) $((48312071 + q * 104729)))
			done
		}
		archline NMI "Non-maskable interrupts" 212 198 203 201 188 190 185 187
		archline LOC "Local timer interrupts" 190284311 187712009 189002218 188120337 176653208 175998421 176010233 175870164
		archline SPU "Spurious interrupts" 0 0 0 0 0 0 0 0
		archline PMI "Performance monitoring interrupts" 212 198 203 201 188 190 185 187
		archline IWI "IRQ work interrupts" 1844 1702 1693 1688 1201 1187 1190 1176
		archline RTR "APIC ICR read retries" 0 0 0 0 0 0 0 0
		archline RES "Rescheduling interrupts" 9821334 9712008 9688120 9701455 4120334 4098127 4102233 4088761
		archline CAL "Function call interrupts" 1203344 1187221 1190032 1188711 902113 899807 901224 898002
		archline TLB "TLB shootdowns" 402211 398870 399912 401003 201334 199870 200113 198776
		archline TRM "Thermal event interrupts" 0 0 0 0 0 0 0 0
		archline THR "Threshold APIC interrupts" 0 0 0 0 0 0 0 0
		archline MCE "Machine check exceptions" 0 0 0 0 0 0 0 0
		archline MCP "Machine check polls" 631 631 631 631 631 631 631 631
		printf '%*s: %10u\n' 4 ERR 0
		printf '%*s: %10u\n' 4 MIS 0
		archline PIN "Posted-interrupt notification event" 0 0 0 0 0 0 0 0
		archline NPI "Nested posted-interrupt event" 0 0 0 0 0 0 0 0
		archline PIW "Posted-interrupt wakeup event" 0 0 0 0 0 0 0 0
	} >"$dst/proc/interrupts"
	w /proc/irq/default_smp_affinity ff
	irqdir 0 "$all" 0 0
	irqdir 8 "$all" 0 0
	irqdir 9 "$all" 2 0
	irqdir 24 "$all" 0 0
	irqdir 25 "$all" 4 1
	irqdir 40 "$all" 0 0
	irqdir 41 "$all" 1 0
	irqdir 60 "$all" 4 1
	for q in 1 2 3 4 5 6 7 8; do irqdir $((60 + q)) "$((q - 1))" $((q - 1)) 1; done
	irqdir 100 "$all" 4 1
	for q in 0 1 2 3 4 5 6 7; do irqdir $((101 + q)) "0 1 2 3" $((q % 4)) 1; done

	# --- eth0: i40e on node 1, 8 queues, RPS off, XPS one CPU per queue ---
	d=/sys/devices/$nic
	w $d/vendor 0x8086
	w $d/device 0x158b
	w $d/class 0x020000
	w $d/numa_node 1
	w $d/local_cpulist 4-7
	for q in 100 101 102 103 104 105 106 107 108; do w $d/msi_irqs/$q msix; done
	mkdir -p "$dst$d/net"
	ln -s ../../../../bus/pci/drivers/i40e "$dst$d/driver"
	e=$d/net/eth0
	for f in "$kvm"/sys/devices/pci0000:00/0000:00:03.0/virtio*/net/eth0/*; do
		[ -f "$f" ] && [ ! -L "$f" ] && cp "$f" "$dst$e/" 2>/dev/null || true
	done
	w $e/speed 25000
	w $e/duplex full
	w $e/mtu 1500
	w $e/address 3c:fd:fe:b5:27:40
	w $e/operstate up
	w $e/carrier 1
	w $e/tx_queue_len 1000
	w $e/ifindex 2
	w $e/iflink 2
	for q in 0 1 2 3 4 5 6 7; do
		w $e/queues/rx-$q/rps_cpus 00
		w $e/queues/rx-$q/rps_flow_cnt 0
		w $e/queues/tx-$q/xps_cpus "$(mask $q)"
		w $e/queues/tx-$q/tx_maxrate 0
		w $e/queues/tx-$q/tx_timeout 0
	done
	ln -s ../../../0000:af:00.0 "$dst$e/device"
	mkdir -p "$dst/sys/class/net"
	ln -s ../../devices/$nic/net/eth0 "$dst/sys/class/net/eth0"
	# lo as on kvm
	mkdir -p "$dst/sys/devices/virtual/net"
	cp -r "$kvm/sys/devices/virtual/net/lo" "$dst/sys/devices/virtual/net/lo"
	ln -s ../../devices/virtual/net/lo "$dst/sys/class/net/lo"

	# --- conntrack: 92% full; the modules mkmetal.sh lists, in /sys/module ---
	w /proc/sys/net/netfilter/nf_conntrack_count 241877
	w /proc/sys/net/netfilter/nf_conntrack_max 262144
	w /proc/sys/net/netfilter/nf_conntrack_buckets 65536
	for m in nf_conntrack nf_defrag_ipv4 nf_defrag_ipv6; do
		w /sys/module/$m/initstate live
		w /sys/module/$m/refcnt 1
	done
	w /sys/module/nf_conntrack/parameters/hashsize 65536
	w /sys/module/nf_conntrack/parameters/acct N
	mkdir -p "$dst/proc/net"
	{
		echo "sockets: used 3187"
		echo "TCP: inuse 2411 orphan 12 tw 18734 alloc 2603 mem 9120"
		echo "UDP: inuse 14 mem 38"
		echo "UDPLITE: inuse 0"
		echo "RAW: inuse 0"
		echo "FRAG: inuse 0 memory 0"
	} >"$dst/proc/net/sockstat"

	# --- block: sda behind the PERC (write through), nvme0n1 ---
	vq=$(readlink -f "$kvm/sys/block/vda")/queue
	s=/sys/devices/$raid/host0/target0:2:0/0:2:0:0
	mkdir -p "$dst$s/block/sda/queue"
	cp "$vq"/* "$dst$s/block/sda/queue/"
	w $s/model "PERC H730P Mini "
	w $s/vendor "DELL    "
	w $s/block/sda/size 2341994496
	w $s/block/sda/queue/rotational 1
	w $s/block/sda/queue/scheduler "none [mq-deadline] kyber bfq "
	w $s/block/sda/queue/read_ahead_kb 128
	w $s/block/sda/queue/nr_requests 256
	w $s/block/sda/queue/write_cache "write through"
	w $s/block/sda/queue/discard_max_bytes 0
	w $s/block/sda/mq/0/cpu_list "0, 1, 2, 3, 4, 5, 6, 7"
	w $s/block/sda/mq/0/nr_tags 4096
	ln -s ../../../0:2:0:0 "$dst$s/block/sda/device"
	n=/sys/devices/$nvme/nvme/nvme0
	mkdir -p "$dst$n/nvme0n1/queue"
	cp "$vq"/* "$dst$n/nvme0n1/queue/"
	w $n/model "Dell Express Flash PM1725b 1.6TB SFF     "
	w $n/nvme0n1/size 3125627568
	w $n/nvme0n1/queue/rotational 0
	w $n/nvme0n1/queue/scheduler "[none] mq-deadline kyber bfq "
	w $n/nvme0n1/queue/read_ahead_kb 128
	w $n/nvme0n1/queue/nr_requests 1023
	w $n/nvme0n1/queue/write_cache "write back"
	w $n/nvme0n1/queue/discard_max_bytes 2199023255040
	for q in 0 1 2 3 4 5 6 7; do
		w $n/nvme0n1/mq/$q/cpu_list $q
		w $n/nvme0n1/mq/$q/nr_tags 1023
	done
	ln -s ../../nvme0 "$dst$n/nvme0n1/device"
	w /sys/devices/$nvme/numa_node 1
	mkdir -p "$dst/sys/block"
	ln -s ../devices/$raid/host0/target0:2:0/0:2:0:0/block/sda "$dst/sys/block/sda"
	ln -s ../devices/$nvme/nvme/nvme0/nvme0n1 "$dst/sys/block/nvme0n1"

	# --- mounts: a Debian 12 server with cgroup2 only ---
	for p in 4242 4243; do
		cat >"$dst/proc/$p/mountinfo" <<'EOF'
22 29 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
23 29 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
24 29 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs udev rw,size=32816936k,nr_inodes=8204234,mode=755,inode64
25 24 0:23 / /dev/pts rw,nosuid,noexec,relatime shared:3 - devpts devpts rw,gid=5,mode=620,ptmxmode=000
26 29 0:24 / /run rw,nosuid,nodev,noexec,relatime shared:5 - tmpfs tmpfs rw,size=6569520k,mode=755,inode64
29 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro
30 22 0:6 / /sys/kernel/security rw,nosuid,nodev,noexec,relatime shared:8 - securityfs securityfs rw
31 24 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64
32 26 0:27 / /run/lock rw,nosuid,nodev,noexec,relatime shared:6 - tmpfs tmpfs rw,size=5120k,inode64
33 22 0:28 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
34 22 0:29 / /sys/fs/pstore rw,nosuid,nodev,noexec,relatime shared:10 - pstore pstore rw
35 22 0:30 / /sys/fs/bpf rw,nosuid,nodev,noexec,relatime shared:11 - bpf bpf rw,mode=700
36 23 0:31 / /proc/sys/fs/binfmt_misc rw,relatime shared:13 - autofs systemd-1 rw,fd=30,pgrp=1,timeout=0,minproto=5,maxproto=5,direct,pipe_ino=17602
37 24 0:32 / /dev/hugepages rw,relatime shared:14 - hugetlbfs hugetlbfs rw,pagesize=2M
38 24 0:20 / /dev/mqueue rw,nosuid,nodev,noexec,relatime shared:15 - mqueue mqueue rw
39 22 0:7 / /sys/kernel/debug rw,nosuid,nodev,noexec,relatime shared:16 - debugfs debugfs rw
40 22 0:12 / /sys/kernel/tracing rw,nosuid,nodev,noexec,relatime shared:17 - tracefs tracefs rw
64 29 8:1 / /boot/efi rw,relatime shared:31 - vfat /dev/sda1 rw,fmask=0077,dmask=0077,codepage=437,iocharset=ascii,shortname=mixed,utf8,errors=remount-ro
67 29 259:1 / /data rw,noatime shared:33 - xfs /dev/nvme0n1p1 rw,attr2,inode64,logbufs=8,logbsize=32k,noquota
EOF
		printf '0::/system.slice/app.service\n' >"$dst/proc/$p/cgroup"
	done
	printf '0::/init.scope\n' >"$dst/proc/1/cgroup"

	# --- cgroup v2: app.service limited to 2 CPUs and throttled ---
	cg=/sys/fs/cgroup
	w $cg/cgroup.controllers "cpuset cpu io memory hugetlb pids rdma misc"
	w $cg/cgroup.subtree_control "cpuset cpu io memory pids"
	w $cg/cpuset.cpus.effective 0-7
	w $cg/cpuset.mems.effective 0-1
	w $cg/cpu.stat "usage_usec 96124412133" "user_usec 71233401877" "system_usec 24891010256"
	for sub in system.slice system.slice/app.service; do
		w $cg/$sub/cgroup.controllers "cpuset cpu io memory pids"
		w $cg/$sub/cpuset.cpus.effective 0-7
		w $cg/$sub/cpuset.mems.effective 0-1
		w $cg/$sub/cpuset.cpus ""
		w $cg/$sub/memory.max max
	done
	w $cg/system.slice/cgroup.subtree_control "cpu memory pids"
	w $cg/system.slice/cpu.max "max 100000"
	w $cg/system.slice/cpu.stat "usage_usec 41236611893" "user_usec 33120987201" "system_usec 8115624692" \
		"nr_periods 0" "nr_throttled 0" "throttled_usec 0" "nr_bursts 0" "burst_usec 0"
	w $cg/system.slice/app.service/cgroup.subtree_control ""
	w $cg/system.slice/app.service/cpu.max "200000 100000"
	w $cg/system.slice/app.service/memory.max 17179869184
	w $cg/system.slice/app.service/cpu.stat "usage_usec 36871204417" "user_usec 30012377612" "system_usec 6858826805" \
		"nr_periods 1843200" "nr_throttled 412377" "throttled_usec 9823412345" "nr_bursts 0" "burst_usec 0"

	# --- services: irqbalance and auditd running ---
	w /proc/1187/comm irqbalance
	printf '/usr/sbin/irqbalance\0--foreground\0' >"$dst/proc/1187/cmdline"
	w /proc/1254/comm auditd
	printf '/sbin/auditd\0' >"$dst/proc/1254/cmdline"

	# --- tools: a production server without bench tools ---
	rm -rf "$dst/usr/bin" "$dst/usr/sbin"
	for t in /usr/bin/perf /usr/bin/fio /usr/sbin/ethtool; do
		mkdir -p "$dst$(dirname $t)"
		: >"$dst$t"
		chmod 755 "$dst$t"
	done
	echo "mkfixture-io: metal done"
}

case ${1:-all} in
kvm) io_kvm ;;
metal) io_metal ;;
all) io_kvm && io_metal ;;
*) echo "usage: $0 [kvm|metal|all]" >&2; exit 2 ;;
esac
