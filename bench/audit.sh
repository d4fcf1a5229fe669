#!/usr/bin/env bash
# The cost of `perflab audit` on this machine, budget 10 ms median end to
# end (process start included). Prints the docs/performance.md rows:
#  1. BenchmarkSnapshotAndAudit (internal/audit): the in-process cost, the
#     live snapshot reading the audit's sysctls ("audit") and every sysctl
#     ("full"), COUNT samples of 50 iterations, median wall and CPU time;
#  2. the binary end to end with hyperfine (`perflab audit --format json`
#     and, as the start-up floor, `perflab --version`): median, and mean
#     user+system CPU time;
#  3. bench/startup.sh on the same binary: start-up against work (a Go
#     hello world, --version, audit and the audit's read floor,
#     bench/audit-floor, interleaved; median wall, CPU and page faults).
# Load average is printed before and after: on a shared 2-core machine wall
# times measure the neighbours too; CPU time much less so.
#
#   bench/audit.sh            # COUNT=10 samples; about 1.5 min on a quiet machine
#   COUNT=20 RUNS=100 bench/audit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-10}
RUNS=${RUNS:-50}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
out=$(go test -run '^$' -bench '^BenchmarkSnapshotAndAudit$' -benchtime 50x -count "$COUNT" ./internal/audit)
echo "$out" | grep '^Benchmark'
rows=$(echo "$out" | awk '/^BenchmarkSnapshotAndAudit\// {
  split($1, n, "/"); k = n[2]; sub(/-[0-9]+$/, "", k)
  for (i = 2; i <= NF; i++) { if ($i == "ns/op") w[k] = w[k] " " $(i-1); if ($i == "cpu-ms/op") c[k] = c[k] " " $(i-1) }
  if (!(k in seen)) { seen[k] = 1; order[++m] = k }
}
function med(s,   v, n, i, j, t) {
  n = split(s, v, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
  return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END { for (i = 1; i <= m; i++) { k = order[i]; printf "in-process snapshot (%s) + audit|%.1f ms|%.1f ms\n", k == "audit" ? "the audit'"'"'s sysctls, no tools" : "all sysctls and tools", med(w[k]) / 1e6, med(c[k]) } }')

bin=""
if command -v hyperfine >/dev/null; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  bin=$tmp/perflab
  CGO_ENABLED=0 go build -o "$bin" ./cmd/perflab
  hyperfine --warmup 5 --runs "$RUNS" -N --export-json "$tmp/h.json" "$bin audit --format json" "$bin --version" >&2
  rows+=$'\n'$(python3 - "$tmp/h.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    what = "binary end to end, `perflab audit --format json`" if "audit" in r["command"] else "binary start-up floor, `perflab --version`"
    print(f"{what}|{r['median']*1e3:.1f} ms (mean {r['mean']*1e3:.1f} ± {r['stddev']*1e3:.1f})|{(r['user']+r['system'])*1e3:.1f} ms")
PY
)
else
  echo "hyperfine is not installed: the end-to-end rows are missing" >&2
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "| date | machine | load average (before → after) | what | median wall | CPU (user+sys) |"
echo "|---|---|---|---|---|---|"
machine="$(nproc) vCPU $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(uname -r)"
while IFS='|' read -r what wall cpu; do
  echo "| $(date -u +%F) | $machine | $load0 → $load1 | $what | $wall | $cpu |"
done <<<"$rows"
echo "budget: the binary end to end ≤ 10 ms median"
if [ -n "$bin" ]; then
  echo
  PERFLAB_BIN=$bin RUNS=$((RUNS * 2)) bench/startup.sh
fi
