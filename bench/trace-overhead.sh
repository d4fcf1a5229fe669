#!/usr/bin/env bash
# Overhead of perflab's eBPF tracers: a workload's throughput without and
# with each tracer attached, in alternating blocks (off, on, off, on, …) so
# drifting host load hits both sides alike. Each pair gives one ratio
# on/off; the result is the mean ratio with a 95 % t confidence interval
# over the pairs (the block, not the request, is the unit).
#
#   sudo bash bench/trace-overhead.sh            # 10 pairs per tracer
#   PAIRS=12 sudo bash bench/trace-overhead.sh retrans offcpu
#
# offcpu-pid traces only redis (idle) while the pipe benchmark runs: the
# cost every other thread pays when one process is profiled.
#
# Needs root, redis-server, redis-benchmark, perf. docs/trace.md records a run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${TRACE_BENCH_DIR:-/tmp/perflab-trace-bench}
pairs=${PAIRS:-10}
mkdir -p "$out"
go build -o "$out/perflab" ./cmd/perflab
P="$out/perflab"
port=56391
redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile "$out/redis.pid" >/dev/null
trap 'kill "$(cat "$out/redis.pid")" 2>/dev/null || true' EXIT
sleep 0.5
dd if=/dev/urandom of="$out/cache.dat" bs=1M count=256 status=none

# Each workload prints one throughput number (higher is better).
w_redis() { redis-benchmark -h 127.0.0.1 -p $port -t set,get -n 20000 -c 20 -q --csv | awk -F, 'NR>1{gsub(/"/,"",$2); s+=$2; n++} END{print s/n}'; }
w_pipe() { perf bench sched pipe -l 100000 2>&1 | awk '/ops\/sec/{print $1}'; }
w_futex() { perf bench futex lock-pi -r 5 2>&1 | awk '/Averaged/{print $2}'; }
w_read() { for _ in 1 2 3 4; do dd if="$out/cache.dat" of=/dev/null bs=4k 2>&1; done | awk '/copied/{b+=$1; t+=$(NF-3)} END{print b/t}'; }  # 4 KiB reads: one probe hit each

declare -A work=([retrans]=w_redis [offcpu]=w_pipe [offcpu-pid]=w_pipe [locks]=w_futex [cachestat]=w_read)
declare -A tracer=([retrans]="trace retrans -d 0 -o /dev/null"
  [offcpu]="profile -a --off-cpu -d 0 -o $out/off.folded"
  [offcpu-pid]="profile -p $(cat "$out/redis.pid") --off-cpu -d 0 -o $out/offpid.folded"
  [locks]="profile -a --locks -d 0 -o $out/locks.folded"
  [cachestat]="trace cachestat -d 0 -o /dev/null")

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(retrans offcpu offcpu-pid locks cachestat)
echo "== $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $pairs pairs"
for n in "${names[@]}"; do
  f=${work[$n]}
  : > "$out/$n.txt"
  for ((i = 0; i < pairs; i++)); do
    off=$($f)
    $P ${tracer[$n]} >/dev/null 2>"$out/$n.err" & tp=$!
    sleep 1.5
    kill -0 $tp 2>/dev/null || { cat "$out/$n.err"; exit 3; }
    on=$($f)
    kill -INT $tp; wait $tp || true
    echo "$off $on" >> "$out/$n.txt"
  done
  python3 - "$n" "$out/$n.txt" "${work[$n]}" <<'PY'
import sys, statistics as st
name, path, work = sys.argv[1], sys.argv[2], sys.argv[3]
pairs = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
r = [on / off for off, on in pairs]
t95 = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26, 11: 2.23, 12: 2.20, 13: 2.18, 16: 2.13, 21: 2.09}
n = len(r)
t = t95.get(n, 2.0)
m = st.mean(r)
h = t * st.stdev(r) / n ** 0.5
offm = st.median(p[0] for p in pairs)
print(f"{name:10s} {work:8s} n={n} median off {offm:,.0f}/s  throughput with tracer {100*(m-1):+.1f} % (95 % CI {100*(m-h-1):+.1f} … {100*(m+h-1):+.1f} %)")
PY
done
