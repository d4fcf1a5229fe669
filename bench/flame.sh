#!/usr/bin/env bash
# Side-by-side speed and memory of perflab's flame tools and inferno
# (`cargo install inferno`) — and of FlameGraph's Perl scripts when
# FLAMEGRAPH_DIR points at a checkout of github.com/brendangregg/FlameGraph.
#
#   bash bench/flame.sh                        # captures ~100 MB of perf script (needs root + perf)
#   FLAME_BENCH_INPUT=big.txt bash bench/flame.sh   # or bring your own perf script text
#
# Results (hyperfine markdown and a summary) go to $FLAME_BENCH_DIR
# (default /tmp/perflab-flame-bench); docs/flame.md records a run.
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
echo "   perflab and inferno folded outputs are identical ($(wc -l < "$out/perflab.folded") unique stacks)"

pl=()
if [ -n "${FLAMEGRAPH_DIR:-}" ] && [ -x "$FLAMEGRAPH_DIR/stackcollapse-perf.pl" ]; then
  pl=(-n "stackcollapse-perf.pl" "$FLAMEGRAPH_DIR/stackcollapse-perf.pl $input > /dev/null")
fi
hyperfine --warmup 1 --runs "$runs" --export-json "$out/fold.json" --export-markdown "$out/fold.md" \
  -n "perflab fold -j1" "$P flame fold -j 1 $input > /dev/null" \
  -n "perflab fold -j2" "$P flame fold -j 2 $input > /dev/null" \
  -n "inferno-collapse-perf -n1" "inferno-collapse-perf -q -n 1 $input > /dev/null" \
  -n "inferno-collapse-perf -n2" "inferno-collapse-perf -q -n 2 $input > /dev/null" \
  "${pl[@]}" >/dev/null
python3 - "$out/fold.json" "$bytes" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); b = int(sys.argv[2])
print("== fold throughput: wall (mean ± sd) and CPU time (user+sys; robust when other jobs share the CPUs)")
for r in d["results"]:
    m, s = r["mean"], r["stddev"] or 0
    cpu = r["user"] + r["system"]
    print(f"   {r['command']:28s} {m*1000:7.1f} ± {s*1000:5.1f} ms {b/m/1e6:7.1f} MB/s wall   cpu {cpu*1000:7.1f} ms {b/cpu/1e6:7.1f} MB/cpu-s")
EOF

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
