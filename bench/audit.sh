#!/usr/bin/env bash
# The cost of `perflab audit` on this machine: a live snapshot of / plus the
# whole rule catalogue (BenchmarkSnapshotAndAudit in internal/audit), and the
# binary end to end with hyperfine when it is installed. The budget is a
# median of 50 ms on a 2-core machine; docs/performance.md records results.
#
#   bench/audit.sh            # 10 samples of 50 iterations each
#   COUNT=20 bench/audit.sh
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-10}
out=$(go test -run '^$' -bench '^BenchmarkSnapshotAndAudit$' -benchtime 50x -count "$COUNT" ./internal/audit)
echo "$out" | grep '^Benchmark'
echo "$out" | awk '/^BenchmarkSnapshotAndAudit/ { v[n++] = $3 }
END {
  if (n == 0) { print "no benchmark results"; exit 1 }
  # sort the ns/op samples and take the median
  for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
  med = (n % 2) ? v[int(n / 2)] : (v[n / 2 - 1] + v[n / 2]) / 2
  printf "snapshot+audit: median %.1f ms/op over %d samples (min %.1f, max %.1f ms); budget 50 ms\n", med / 1e6, n, v[0] / 1e6, v[n - 1] / 1e6
  if (med > 50e6) exit 1
}'

if command -v hyperfine >/dev/null; then
  bin=$(mktemp -d)/perflab
  CGO_ENABLED=0 go build -o "$bin" ./cmd/perflab
  # The whole command: process start, snapshot, audit, text report.
  hyperfine --warmup 3 --runs 30 -N "$bin audit --format json"
  rm -rf "$(dirname "$bin")"
fi
