#!/usr/bin/env bash
# Server time of each 'perflab serve' view on a store of 10,000 runs
# generated from real exported runs (internal/serve/testdata/real-runs.json,
# varied per host, per run and with steps; see internal/serve/gen_test.go).
# Reports p50 and p95 per page; docs/serve.md holds the results.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${PERFLAB_SERVE_BENCH_DB:-/tmp/perflab-serve-bench.db}
export PERFLAB_SERVE_BENCH_DB=$db
go test -run '^$' -bench BenchmarkPages -benchtime 60x -timeout 30m ./internal/serve/ | grep -E '^(Benchmark|.*generated)'
echo "store: $db ($(du -h "$db" | cut -f1))"
