#!/usr/bin/env bash
# Side-by-side speed and memory of perflab's flame tools and inferno
# (`cargo install inferno`) — and of FlameGraph's Perl scripts when
# FLAMEGRAPH_DIR points at a checkout of github.com/brendangregg/FlameGraph.
#
#   bash bench/flame.sh                        # captures ~100 MB of perf script (needs root + perf)
#   FLAME_BENCH_INPUT=big.txt bash bench/flame.sh   # or bring your own perf script text
#   FLAME_BENCH_INSTRUCTIONS=1 bash bench/flame.sh  # also instruction counts (valgrind), exact under load
#
# Results (hyperfine markdown and a summary) go to $FLAME_BENCH_DIR
# (default /tmp/perflab-flame-bench); docs/flame.md and docs/performance.md
# ("## Flame fold") record a run. Runs are FLAME_BENCH_RUNS (default 7)
# alternating pairs; the capture is reused across runs (delete it to redo).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=${FLAME_BENCH_DIR:-/tmp/perflab-flame-bench}
runs=${FLAME_BENCH_RUNS:-7}
mkdir -p "$out"
export PATH="$PATH:$HOME/.cargo/bin"
for t in hyperfine inferno-collapse-perf inferno-flamegraph inferno-diff-folded; do
  command -v "$t" >/dev/null || { echo "bench/flame.sh: $t is required (apt-get install hyperfine; cargo install inferno)" >&2; exit 2; }
done
go build -o "$out/perflab" ./cmd/perflab
P="$out/perflab"

input=${FLAME_BENCH_INPUT:-}
if [ -z "$input" ]; then
  input="$out/capture.perf.txt"
  if [ ! -s "$input" ]; then
    echo "== capturing: C, Go, dd and redis under load, all CPUs, 10 s"
    w="$out/work"; mkdir -p "$w"
    gcc -O2 -fno-omit-frame-pointer -o "$w/cpu" internal/flame/fold/testdata/workloads/cpu.c
    (cd internal/flame/fold/testdata/workloads && go build -o "$w/gowork" gowork.go)
    redis-server --port 56380 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile "$w/redis.pid" >/dev/null
    sleep 0.5
    "$w/cpu" 100000000 >/dev/null & c1=$!
    "$w/gowork" 100000000 >/dev/null & c2=$!
    dd if=/dev/zero of="$w/dd.out" bs=64k count=1000000 status=none & c3=$!
    redis-benchmark -h 127.0.0.1 -p 56380 -q -n 10000000 -c 20 -t set,get >/dev/null & c4=$!
    perf record -q -e cpu-clock -F 2000 -a -g -o "$w/perf.data" -- sleep 10 >/dev/null 2>&1
    kill $c1 $c2 $c3 $c4 2>/dev/null || true; wait 2>/dev/null || true
    kill "$(cat "$w/redis.pid")" 2>/dev/null || true
    rm -f "$w/dd.out"
    perf script -i "$w/perf.data" > "$w/one.txt" 2>/dev/null
    # Repeat whole captures (valid input, same unique stacks) up to ~100 MB.
    : > "$input"
    while [ "$(stat -c %s "$input")" -lt 100000000 ]; do cat "$w/one.txt" >> "$input"; done
  fi
fi
bytes=$(stat -c %s "$input")
mb=$(python3 -c "print(round($bytes/1e6, 1))")
echo "== input: $input, $mb MB, $(grep -c '^$' "$input") samples; $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Every folder must agree byte for byte before its speed means anything.
"$P" flame fold -j 1 "$input" > "$out/perflab.folded"
inferno-collapse-perf -q -n 1 "$input" > "$out/inferno.folded"
cmp "$out/perflab.folded" "$out/inferno.folded"
"$P" flame fold -j 2 "$input" 2>/dev/null | cmp - "$out/inferno.folded"
inferno-collapse-perf -q -n 2 "$input" | cmp - "$out/inferno.folded"
echo "   perflab and inferno folded outputs are identical ($(wc -l < "$out/perflab.folded") unique stacks)"

# The ratio to inferno: both folders run alternately (perflab, inferno,
# perflab, …), so whatever else the machine does falls on both alike;
# each pair gives a ratio and the median pair ratio is reported, with the
# medians of wall and CPU time (user+sys) and the load average around it.
# inferno-collapse-perf's default --nthreads is the number of CPUs; -n 2
# and -j 2 compare like with like (2 parser threads each).
export FOLD_IN="$input" FOLD_BYTES="$bytes" FOLD_RUNS="$runs" FOLD_P="$P" FLAMEGRAPH_DIR="${FLAMEGRAPH_DIR:-}"
python3 - <<'PYEOF' | tee "$out/fold.txt"
import os, resource, statistics, subprocess, time
inp, b, runs, p = os.environ["FOLD_IN"], int(os.environ["FOLD_BYTES"]), int(os.environ["FOLD_RUNS"]), os.environ["FOLD_P"]
pairs = [("perflab flame fold -j 2", f"{p} flame fold -j 2 {inp}", "inferno-collapse-perf -n 2", f"inferno-collapse-perf -q -n 2 {inp}"),
         ("perflab flame fold -j 1", f"{p} flame fold -j 1 {inp}", "inferno-collapse-perf -n 1", f"inferno-collapse-perf -q -n 1 {inp}")]
def run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
load = lambda: " ".join(open("/proc/loadavg").read().split()[:3])
print(f"== fold, alternating runs ({runs} pairs each, after one warm-up pair); load before: {load()}")
for pn, pc, iname, ic in pairs:
    run(pc); run(ic)
    pw, pcpu, iw, icpu, ratio = [], [], [], [], []
    for _ in range(runs):
        a, ac = run(pc); c, cc = run(ic)
        pw.append(a); pcpu.append(ac); iw.append(c); icpu.append(cc); ratio.append(c / a)
    m = statistics.median
    for name, w, cpu in ((pn, pw, pcpu), (iname, iw, icpu)):
        print(f"   {name:28s} wall {m(w)*1000:7.1f} ms ({b/m(w)/1e6:6.1f} MB/s)  cpu {m(cpu)*1000:7.1f} ms ({b/m(cpu)/1e6:6.1f} MB/cpu-s)")
    lo, hi = min(ratio), max(ratio)
    print(f"   ratio (inferno/perflab, wall): median {m(ratio):.2f}x (pairs {lo:.2f}-{hi:.2f}); cpu {m(icpu)/m(pcpu):.2f}x")
print(f"   load after: {load()}")
fg = os.environ.get("FLAMEGRAPH_DIR")
if fg and os.access(f"{fg}/stackcollapse-perf.pl", os.X_OK):
    w, cpu = run(f"{fg}/stackcollapse-perf.pl {inp}")
    print(f"   {'stackcollapse-perf.pl':28s} wall {w*1000:7.1f} ms  cpu {cpu*1000:7.1f} ms (one run)")
PYEOF

# The line-scan floor: what 1 and 2 threads take merely to find every
# newline of the input in memory, and to also hash every stack — no
# folder can beat it; inferno's time over it is the largest ratio this
# machine allows.
(cd internal/flame/fold && go test -c -o "$out/fold.test" .)
echo "== line-scan floor (in memory; no reading, no process start); load: $(cut -d' ' -f1-3 /proc/loadavg)"
PERFLAB_FOLD_BENCH_FILE="$input" "$out/fold.test" -test.run '^$' -test.bench 'LineScanFloor' -test.benchtime 10x |
  awk '/^BenchmarkLineScanFloor/ { sub(/^BenchmarkLineScanFloor\//, ""); sub(/-[0-9]+$/, "", $1); printf "   %-28s %8.1f ms %8.1f MB/s\n", $1, $3/1e6, $5 }'

# Instructions executed (valgrind's cachegrind): exact whatever the load,
# so a change can be compared on a busy machine. Opt-in: ~1 minute a run.
if [ "${FLAME_BENCH_INSTRUCTIONS:-0}" = 1 ] && command -v valgrind >/dev/null; then
  echo "== instructions (cachegrind; data-cache misses simulated)"
  for c in "$P flame fold -j 1 $input" "$P flame fold -j 2 $input" "inferno-collapse-perf -q -n 1 $input"; do
    valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null $c 2>&1 >/dev/null |
      awk -v c="$c" '/I +refs:/ { i=$NF } /D1 +misses:/ { d=$4 } END { printf "   %s instructions, %s D1 misses  %s\n", i, d, c }'
  done
fi

echo "== peak memory (max RSS)"
for c in "$P flame fold -j 1 $input" "$P flame fold -j 2 $input" "inferno-collapse-perf -q -n 1 $input" "inferno-collapse-perf -q -n 2 $input"; do
  /usr/bin/time -f "   %M KB  $c" $c > /dev/null
done
# Memory follows unique stacks, not input size: half the input, same RSS.
half="$out/half.perf.txt"; head -c $((bytes / 2)) "$input" | sed '$d' > "$half"; echo >> "$half"
/usr/bin/time -f "   %M KB  perflab fold -j 2 on half the input" "$P" flame fold -j 2 "$half" > /dev/null || true

# Render and diff, from the folded output; the two halves of the capture
# window make a before/after pair.
f="$out/perflab.folded"
"$P" flame fold "$half" > "$out/half.folded" || true
hyperfine --warmup 1 --runs "$runs" --export-json "$out/render.json" --export-markdown "$out/render.md" \
  -n "perflab render svg" "$P flame render $f > $out/p.svg" \
  -n "perflab render html" "$P flame render $f --format html > $out/p.html" \
  -n "inferno-flamegraph" "inferno-flamegraph $f > $out/i.svg" \
  -n "perflab diff --format folded" "$P flame diff $out/half.folded $f --format folded > $out/p.diff.folded 2>/dev/null" \
  -n "inferno-diff-folded" "inferno-diff-folded $out/half.folded $f > $out/i.diff" >/dev/null
python3 - "$out/render.json" <<'EOF'
import json, sys
print("== render and diff: wall (mean ± sd), CPU time (user+sys)")
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"   {r['command']:28s} {r['mean']*1000:8.1f} ± {(r['stddev'] or 0)*1000:5.1f} ms   cpu {(r['user']+r['system'])*1000:7.1f} ms")
EOF
cmp <(sort "$out/p.diff.folded") <(sort "$out/i.diff") && echo "   perflab and inferno differential folded outputs are identical"
echo "== details: $out/fold.md $out/render.md"
