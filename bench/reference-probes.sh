#!/usr/bin/env bash
# reference-probes.sh — measure perflab's builtin probes and the standard tool
# each one is meant to agree with, back to back, and print the ratio.
# The table in docs/probes.md was produced with it.
#
#   bench/reference-probes.sh [ROUNDS] [CHECK...]
#
# ROUNDS (default 3) alternates tool and probe that many times per check and
# reports the median of each side (STAT=best: the best round of each side,
# the fairer choice on a host that other work keeps busy). CHECKs: cpu membw copy stream sched syscall tcp
# udp disk dd (default: all). Environment: PERFLAB (binary, default: perflab on
# PATH, else go run ./cmd/perflab), DIR (disk test directory, default
# /var/tmp), QUIET=1 waits before each measurement until the host has been
# at least 90% idle for 2 s (for at most QUIET_MAX seconds, default 120),
# because a busy host moves both sides by different amounts.
#
# Run from the repository root. Needs: go, sysbench, mbw, perf, qperf,
# sockperf, fio, gcc with libgomp (stream), coreutils dd, python3 (JSON).
#
# stream: STREAM_C=/path/to/stream.c (John McCalpin's stream.c 5.10; this
# script downloads nothing) is compiled with gcc -O2, once plain (1 thread)
# and once with -fopenmp (all threads, OMP_PROC_BIND=true; OMP_WAIT_POLICY=
# passive, since threads spinning at the barrier on a shared host measured
# 2-8 GB/s instead of 25), with the array
# size perflab's memory.stream chose by STREAM's rule (4x the last-level
# cache; STREAM_ELEMS overrides). Without STREAM_C the check is skipped with
# a message.
# Servers (qperf, sockperf) listen on 127.0.0.1 only and are stopped on exit.
set -euo pipefail

ROUNDS=${1:-3}
shift || true
CHECKS=${*:-cpu membw copy stream sched syscall tcp udp disk dd}
DIR=${DIR:-/var/tmp}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

PERFLAB=${PERFLAB:-$(command -v perflab || true)}
if [[ -z $PERFLAB ]]; then
	PERFLAB=$work/perflab
	go build -o "$PERFLAB" ./cmd/perflab
fi

cpu_busy() { awk '/^cpu /{print $2+$3+$4+$6+$7+$8+$9, $5}' /proc/stat; }
wait_quiet() {
	[[ ${QUIET:-0} == 1 ]] || return 0
	local ok=0 t b1 i1 b2 i2
	for ((t = 0; t < 2 * ${QUIET_MAX:-120}; t++)); do
		read -r b1 i1 < <(cpu_busy); sleep 0.5; read -r b2 i2 < <(cpu_busy)
		if (((i2 - i1) * 100 >= 90 * ((b2 - b1) + (i2 - i1)))); then ok=$((ok + 1)); else ok=0; fi
		((ok >= 4)) && return 0
	done
	echo "# warning: host never quiet" >&2
}

# probe NAME METRIC [ARGS]: the median of one perflab bench run of the probe
# (probe:NAME, since cpu and disk are also suite names).
probe() {
	local name=$1 metric=$2
	shift 2
	wait_quiet
	"$PERFLAB" bench "probe:$name" --no-store --min-runs 6 --max-runs 12 --budget 40s --format json "$@" 2>/dev/null |
		python3 -c "import json,sys; print(next(m['median'] for r in json.load(sys.stdin) if r['probe'] == sys.argv[1] for m in r['metrics'] if m['name'] == sys.argv[2]))" "$name" "$metric"
}

# summary DIR: the median, or with STAT=best the best value (DIR hi: largest).
summary() {
	sort -g | awk -v stat="${STAT:-median}" -v dir="$1" '{v[NR] = $1}
		END {
			if (stat == "best") print (dir == "hi" ? v[NR] : v[1])
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# compare LABEL UNIT hi|lo REF_CMD PROBE_CMD: alternate, then print both
# sides' summaries and the ratio probe/tool. hi|lo says which way is better.
compare() {
	local label=$1 unit=$2 dir=$3 refcmd=$4 probecmd=$5 r p refs="" probes=""
	for ((i = 0; i < ROUNDS; i++)); do
		wait_quiet
		r=$(eval "$refcmd")
		p=$(eval "$probecmd")
		refs+="$r"$'\n'
		probes+="$p"$'\n'
		# Every round on stderr, so a ratio can be judged by its spread.
		printf '# %s round %d: reference %s perflab %s\n' "$label" "$((i + 1))" "$r" "$p" >&2
	done
	r=$(printf '%s' "$refs" | summary "$dir")
	p=$(printf '%s' "$probes" | summary "$dir")
	printf '%-28s %12.4g %12.4g %-8s %6.3f\n' "$label" "$r" "$p" "$unit" "$(awk -v a="$p" -v b="$r" 'BEGIN{print a / b}')"
}

printf '%-28s %12s %12s %-8s %6s\n' check reference perflab unit ratio

for c in $CHECKS; do
	case $c in
	cpu)
		for t in 1 2; do
			compare "cpu events/s t$t" events/s hi \
				"sysbench cpu --cpu-max-prime=10000 --threads=$t --time=5 run | awk '/events per second/{print \$4}'" \
				"probe cpu events_per_sec.t$t --param threads=$t"
		done
		;;
	membw)
		for op in read write; do
			for t in 1 2; do
				# sysbench reports MiB/sec; 1 MiB/s = 1.048576e-3 GB/s.
				# --memory-scope=local: each thread streams its own buffer, as
				# the probe's threads stream their own slices. sysbench's
				# default (global) has every thread write the same buffer, and
				# two cores storing to the same lines trade them back and
				# forth (2-thread write: 23 GB/s global, 45 GB/s local here).
				compare "memory $op t$t (sysbench)" GB/s hi \
					"sysbench memory --memory-block-size=256M --memory-total-size=1000G --memory-oper=$op --memory-access-mode=seq --memory-scope=local --threads=$t --time=5 run | sed -n 's/.*(\([0-9.]*\) MiB\/sec).*/\1/p' | awk '{print \$1 * 1.048576e-3}'" \
					"probe memory.bandwidth $op.t$t --param ops=$op --param threads=$t"
			done
		done
		;;
	copy)
		# mbw copies one 128 MiB array onto another; so does the probe with size=256MiB.
		compare "memory copy t1 (mbw)" GB/s hi \
			"mbw -q -n 10 -t0 128 | awk '/^AVG/{for(i=1;i<=NF;i++) if(\$i==\"Copy:\") print \$(i+1) * 1.048576e-3}'" \
			"probe memory.bandwidth copy.t1 --param ops=copy --param threads=1 --param size=256MiB"
		;;
	stream)
		if [[ -z ${STREAM_C:-} || ! -r ${STREAM_C:-} ]]; then
			echo "# stream: skipped: set STREAM_C to the path of McCalpin's stream.c (not downloaded by this script)" >&2
			continue
		fi
		# STREAM's rule, as memory.stream applies it: each array >= 4x the
		# last-level cache(s), at least STREAM's default 10 million elements.
		if [[ -z ${STREAM_ELEMS:-} ]]; then
			llc=$(python3 -c "
import glob
seen = {}
for d in glob.glob('/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*'):
    r = lambda f: open(d + '/' + f).read().strip()
    try:
        if r('type') == 'Instruction': continue
        lvl, size, shared = int(r('level')), r('size'), r('shared_cpu_list')
    except OSError: continue
    m = {'K': 1024, 'M': 1 << 20, 'G': 1 << 30}.get(size[-1], 1)
    seen[(lvl, shared)] = int(size.rstrip('KMG')) * m
top = max((k[0] for k in seen), default=0)
print(sum(v for k, v in seen.items() if k[0] == top))")
			STREAM_ELEMS=$(((4 * llc + 4095) / 4096 * 4096 / 8))
			((STREAM_ELEMS >= 10000384)) || STREAM_ELEMS=10000384 # 10 million, in whole pages
		fi
		gcc -O2 -DSTREAM_ARRAY_SIZE="$STREAM_ELEMS" -mcmodel=medium "$STREAM_C" -o "$work/stream"
		gcc -O2 -fopenmp -DSTREAM_ARRAY_SIZE="$STREAM_ELEMS" -mcmodel=medium "$STREAM_C" -o "$work/stream_omp"
		# gcc -O2 turns Copy's loop into a call to glibc's memcpy (loop
		# distribution); this build keeps the loop, as perflab's Copy is.
		gcc -O2 -fno-tree-loop-distribute-patterns -DSTREAM_ARRAY_SIZE="$STREAM_ELEMS" -mcmodel=medium "$STREAM_C" -o "$work/stream_loop"
		n=$(nproc)
		# One perflab run measures all four kernels at 1 and n threads, and
		# one stream.c run prints all four, so each round runs each side
		# once and every kernel is read from it. Both sides report STREAM's
		# "best rate": stream.c the best of its passes, perflab each
		# iteration's best pass; over the rounds (and perflab's iterations)
		# the best is kept (STAT does not apply), which is what a busy host
		# disturbs least.
		declare -A best
		keep() { awk -v a="${best[$1]:-0}" -v b="$2" 'BEGIN{print (b > a ? b : a)}'; }
		for ((i = 0; i < ROUNDS; i++)); do
			wait_quiet
			out1=$("$work/stream")
			outn=$(OMP_NUM_THREADS=$n OMP_PROC_BIND=true OMP_WAIT_POLICY=passive "$work/stream_omp")
			outl=$("$work/stream_loop")
			rl=$(awk '$1 == "Copy:" {print $2 / 1000}' <<<"$outl")
			best[rlcopy]=$(keep rlcopy "$rl")
			js=$("$PERFLAB" bench probe:memory.stream --no-store --min-runs 4 --max-runs 4 --budget 60s --format json \
				--param threads=1,$n --param array_size=$((STREAM_ELEMS * 8)) 2>/dev/null)
			for k in Copy Scale Add Triad; do
				lk=$(echo "$k" | tr A-Z a-z)
				# STREAM prints "Copy:  20297.8 ..." in MB/s (1e6 bytes).
				r1=$(awk -v k="$k:" '$1 == k {print $2 / 1000}' <<<"$out1")
				rn=$(awk -v k="$k:" '$1 == k {print $2 / 1000}' <<<"$outn")
				p1=$(python3 -c "import json,sys; print(next(m['max'] for r in json.loads(sys.argv[1]) for m in r['metrics'] if m['name'] == sys.argv[2]))" "$js" "$lk.t1")
				pn=$(python3 -c "import json,sys; print(next(m['max'] for r in json.loads(sys.argv[1]) for m in r['metrics'] if m['name'] == sys.argv[2]))" "$js" "$lk.t$n")
				printf '# stream %s round %d: stream.c t1 %s perflab t1 %s | stream.c OpenMP t%d %s perflab t%d %s\n' "$lk" "$((i + 1))" "$r1" "$p1" "$n" "$rn" "$n" "$pn" >&2
				best[r1$lk]=$(keep "r1$lk" "$r1")
				best[p1$lk]=$(keep "p1$lk" "$p1")
				best[rn$lk]=$(keep "rn$lk" "$rn")
				best[pn$lk]=$(keep "pn$lk" "$pn")
			done
		done
		printf '%-28s %12.4g %12.4g %-8s %6.3f\n' "stream copy t1 (-O2, loop kept)" "${best[rlcopy]}" "${best[p1copy]}" GB/s \
			"$(awk -v a="${best[p1copy]}" -v b="${best[rlcopy]}" 'BEGIN{print a / b}')"
		for lk in copy scale add triad; do
			printf '%-28s %12.4g %12.4g %-8s %6.3f\n' "stream $lk t1 (stream.c -O2)" "${best[r1$lk]}" "${best[p1$lk]}" GB/s \
				"$(awk -v a="${best[p1$lk]}" -v b="${best[r1$lk]}" 'BEGIN{print a / b}')"
			printf '%-28s %12.4g %12.4g %-8s %6.3f\n' "stream $lk t$n (stream.c OpenMP)" "${best[rn$lk]}" "${best[pn$lk]}" GB/s \
				"$(awk -v a="${best[pn$lk]}" -v b="${best[rn$lk]}" 'BEGIN{print a / b}')"
		done
		;;
	sched)
		# perf's usecs/op is one round trip = two wake-ups.
		compare "wakeup 1 pair (perf pipe)" µs lo \
			"perf bench sched pipe -T -l 200000 | awk '/usecs\/op/{print \$1 / 2}'" \
			"probe sched.wakeup mean.pairs1 --param pairs=1"
		compare "ctxswitch same CPU (perf)" µs lo \
			"taskset -c 0 perf bench sched pipe -T -l 200000 | awk '/usecs\/op/{print \$1 / 2}'" \
			"probe sched.ctxswitch switch"
		;;
	syscall)
		compare "getppid (perf bench)" ns lo \
			"perf bench syscall basic -l 5000000 | awk '/usecs\/op/{print \$1 * 1000}'" \
			"probe syscall getppid"
		;;
	tcp)
		qperf >/dev/null 2>&1 &
		pids+=($!)
		sleep 0.5
		# qperf prints "latency = 12.3 us" (round trip / 2) and "bw = 3.1 GB/sec".
		# -la 1 -ra 2: client on CPU 0, server on CPU 1, as the probe's
		# placement=spread (unpinned, qperf's latency is bimodal on a VM).
		# Match the value line only: the "tcp_bw:" header also contains "bw".
		qlat() { qperf -t 5 -la 1 -ra 2 127.0.0.1 -oo msg_size:1 tcp_lat | awk '$1 == "latency" {v=$3; u=$4; if(u=="ns")v/=1000; if(u=="ms")v*=1000; print v}'; }
		qbw() { qperf -t 5 -la 1 -ra 2 127.0.0.1 "$@" tcp_bw | awk '$1 == "bw" {v=$3; u=$4; if(u=="KB/sec")v/=1000; if(u=="GB/sec")v*=1000; print v}'; }
		compare "tcp latency (qperf)" µs lo qlat "probe net.tcp latency --param tests=latency"
		compare "tcp bw 64KiB (qperf)" MB/s hi qbw "probe net.tcp bandwidth --param tests=bandwidth"
		compare "tcp bw 1B (qperf)" MB/s hi "qbw -oo msg_size:1" "probe net.tcp bandwidth --param tests=bandwidth --param msg_size=1"
		;;
	udp)
		taskset -c 1 sockperf server -i 127.0.0.1 -p 11111 >/dev/null 2>&1 &
		pids+=($!)
		sleep 0.5
		compare "udp 64B pps (sockperf)" packets/s hi \
			"taskset -c 0 sockperf throughput -i 127.0.0.1 -p 11111 -m 64 -t 5 2>&1 | sed -n 's/.*Message Rate is \([0-9]*\) \[msg\/sec\].*/\1/p'" \
			"probe net.udp tx_pps"
		;;
	disk)
		f=$DIR/perflab-fio.dat
		fjson() { python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; print($1)"; }
		fio_run() { fio --name=ref --filename="$f" --size=256M --ioengine=psync --output-format=json "$@"; }
		compare "disk seq write 1M (fio)" MB/s hi \
			"fio_run --rw=write --bs=1M --direct=1 --end_fsync=1 | fjson \"j['write']['bw_bytes']/1e6\"" \
			"probe disk seq_write --dir $DIR"
		compare "disk seq read 1M (fio)" MB/s hi \
			"fio_run --rw=read --bs=1M --direct=1 | fjson \"j['read']['bw_bytes']/1e6\"" \
			"probe disk seq_read --dir $DIR"
		compare "disk randread 4K qd1 (fio)" IOPS hi \
			"fio_run --rw=randread --bs=4k --direct=1 --time_based --runtime=5 | fjson \"j['read']['iops']\"" \
			"probe disk rand_read --dir $DIR"
		compare "disk randwrite 4K qd1 (fio)" IOPS hi \
			"fio_run --rw=randwrite --bs=4k --direct=1 --time_based --runtime=5 | fjson \"j['write']['iops']\"" \
			"probe disk rand_write --dir $DIR"
		compare "disk write+fsync 4K (fio)" µs lo \
			"fio --name=ref --filename=$DIR/perflab-fio-sync.dat --size=4M --rw=write --bs=4k --fsync=1 --ioengine=psync --time_based --runtime=5 --output-format=json | fjson \"j['sync']['lat_ns']['mean']/1e3 + j['write']['lat_ns']['mean']/1e3\"" \
			"probe disk fsync --dir $DIR"
		rm -f "$f" "$DIR/perflab-fio-sync.dat"
		;;
	*)
		echo "unknown check $c" >&2
		exit 2
		;;
	esac
done
