#!/usr/bin/env bash
# Measures one /metrics scrape under 50 concurrent scrapers (Go benchmark),
# then checks goroutine and heap growth over 10,000 scrapes of a live
# exporter. Results go in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== BenchmarkScrape (50 concurrent scrapers)"
go test -run '^$' -bench BenchmarkScrape -benchtime 2000x -count 5 ./internal/exporter/ | grep -E '^Benchmark'

echo "== 10,000 scrapes against a live exporter"
go build -o /tmp/perflab-bench ./cmd/perflab
port=19${RANDOM:0:3}
/tmp/perflab-bench exporter --listen 127.0.0.1:$port --interval 1h 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null 127.0.0.1:$port/metrics && break; sleep 0.1; done
stat() { curl -s 127.0.0.1:$port/metrics | awk '/^go_goroutines /{g=$2} /^go_memstats_heap_inuse_bytes /{h=$2} END{printf "goroutines=%s heap_inuse=%.1fMiB\n", g, h/1048576}'; }
echo "before: $(stat)"
start=$(date +%s.%N)
seq 10000 | xargs -P 50 -n 200 sh -c 'for _ in "$@"; do curl -s -o /dev/null 127.0.0.1:'$port'/metrics; done' _
end=$(date +%s.%N)
echo "after:  $(stat)"
echo "10,000 scrapes in $(echo "$end - $start" | bc) s (curl process start-up dominates this figure)"
