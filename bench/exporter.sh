#!/usr/bin/env bash
# /metrics under 50 concurrent scrapers (BenchmarkScrape in
# internal/exporter): perflab's handler and the floor (a handler writing the
# same response and nothing else), gzip-accepting and plain scrapers, client
# and server on this machine's cores. Prints the docs/performance.md row:
# the median over COUNT runs of each run's p50 and p99, the worst p99, and
# CPU per scrape (client + server). Then checks goroutine and heap growth
# over 10,000 scrapes of a live `perflab exporter`.
#
#   bench/exporter.sh                # COUNT=5 runs of 2000 scrapes each
#   COUNT=10 bench/exporter.sh
# Takes about a minute on a quiet 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== BenchmarkScrape (50 concurrent scrapers), load average before: $load0"
out=$(go test -run '^$' -bench '^BenchmarkScrape$' -benchtime 2000x -count "$COUNT" ./internal/exporter/)
echo "$out" | grep -E '^Benchmark'
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo
echo "| date | load average (before → after) | handler | scraper | p50 (median of $COUNT) | p99 (median, worst of $COUNT) | CPU per scrape |"
echo "|---|---|---|---|---|---|---|"
echo "$out" | awk -v date="$(date -u +%F)" -v ld="$load0 → $load1" '
/^BenchmarkScrape\// {
  split($1, n, "/"); h = n[2]; enc = n[3]; sub(/-[0-9]+$/, "", enc); k = h "/" enc
  for (i = 2; i <= NF; i++) {
    if ($i == "ms-p50") p50[k] = p50[k] " " $(i-1)
    if ($i == "ms-p99") p99[k] = p99[k] " " $(i-1)
    if ($i == "cpu-µs/op") cpu[k] = cpu[k] " " $(i-1)
  }
  if (!(k in seen)) { seen[k] = 1; order[++m] = k }
}
function med(s,   v, n, i, j, t) {
  n = split(s, v, " ")
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
  return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function worst(s,   v, n, i, w) { n = split(s, v, " "); w = v[1]; for (i = 2; i <= n; i++) if (v[i] + 0 > w + 0) w = v[i]; return w }
END {
  for (i = 1; i <= m; i++) {
    k = order[i]; split(k, p, "/")
    printf "| %s | %s | %s | %s | %.2f ms | %.2f ms (worst %.2f) | %.0f µs |\n", date, ld, p[1], p[2], med(p50[k]), med(p99[k]), worst(p99[k]), med(cpu[k])
  }
}'
echo "budget: p99 ≤ 5 ms for perflab; the floor rows are what net/http and loopback alone cost under the same load"

echo
echo "== 10,000 scrapes against a live exporter"
tmp=$(mktemp -d)
go build -o "$tmp/perflab" ./cmd/perflab
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$tmp/perflab" exporter --listen 127.0.0.1:"$port" --interval 1h 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null 127.0.0.1:"$port"/metrics && break; sleep 0.1; done
stat() { curl -s 127.0.0.1:"$port"/metrics | awk '/^go_goroutines /{g=$2} /^go_memstats_heap_inuse_bytes /{h=$2} END{printf "goroutines=%s heap_inuse=%.1fMiB\n", g, h/1048576}'; }
echo "before: $(stat)"
start=$(date +%s.%N)
seq 10000 | xargs -P 50 -n 200 sh -c 'for _ in "$@"; do curl -s --compressed -o /dev/null 127.0.0.1:'"$port"'/metrics; done' _
end=$(date +%s.%N)
sleep 1.2 # let the runtime page re-render so "after" is current
echo "after:  $(stat)"
echo "10,000 scrapes in $(echo "$end - $start" | bc) s (curl process start-up dominates this figure)"
