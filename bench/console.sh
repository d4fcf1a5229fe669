#!/usr/bin/env bash
# Latency of every 'perflab serve' page over a PostgreSQL fleet store of
# 10,000 hosts and 1,000,000 runs, cold and warm; docs/performance.md
# ("Console at ten thousand hosts") and docs/serve.md hold the results.
#
#   bench/console.sh                      # generate the store in a private cluster, measure, remove it
#   PERFLAB_CONSOLE_PGDATA=/var/tmp/fleet bench/console.sh   # keep the cluster there (reused next time)
#   PERFLAB_CONSOLE_DSN=postgres://… bench/console.sh         # measure an existing store (read only)
#
# Knobs: HOSTS (10000), RUNS per probe and host (50: 2 probes → 1,000,000
# runs), COLD restarts per page (10), WARM requests per page (200),
# INDEX_WAIT (1800: polls 2 s apart for the first start's index),
# FIRST_ONLY=1 (measure the first start only), PERFLAB_BIN (a binary to
# measure instead of this tree's), ONLY (a regular expression: measure
# only the pages whose name matches, e.g. ONLY='label|compare'),
# INDEX_CACHE (a directory to keep the index cache in and reuse: the
# first start is measured only when it holds none).
#
# COLD is the first request of a page after 'perflab serve' starts (a new
# process: new connections to PostgreSQL, empty caches in the server; the
# host index read from its cache file, as on any restart), once per
# restart. "first start" is the same without the index's cache file: the
# hosts page then answers within 50 ms with what it has (the store's hosts
# once read, its rows' verdicts once computed); "listed" is when it first
# lists hosts, "index complete" how
# long the background index takes to compute every verdict. WARM is WARM
# requests one after another on one server. Times are curl's time_total
# (request sent to last byte) on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/pg.sh
HOSTS=${HOSTS:-10000}
RUNS=${RUNS:-50}
COLD=${COLD:-10}
WARM=${WARM:-200}
work=$(mktemp -d /tmp/console-bench-XXXXXX)
chmod 755 "$work"
pgbin=$(pg_bin)
pgdata=${PERFLAB_CONSOLE_PGDATA:-}
keep=1
[ -n "$pgdata" ] || { pgdata=$work/pg; keep=0; }
sock=$work/sock
serve_pid=
started_pg=0

cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
	[ "$started_pg" = 1 ] && pg_stop "$pgdata" 2>/dev/null
	[ "$keep" = 1 ] || rm -rf "$pgdata"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
# PERFLAB_BIN: measure that binary (e.g. an older build, for before/after).
pl=${PERFLAB_BIN:-$work/perflab}
[ -n "${PERFLAB_BIN:-}" ] || go build -o "$pl" ./cmd/perflab

dsn=${PERFLAB_CONSOLE_DSN:-}
if [ -z "$dsn" ]; then
	fresh=0
	if [ ! -f "$pgdata/PG_VERSION" ]; then
		pg_init "$pgdata"
		fresh=1
	fi
	# Only a unix socket in our own directory: no TCP port, no other cluster touched.
	pg_start "$pgdata" "$sock" fsync=off shared_buffers=512MB max_wal_size=4GB
	started_pg=1
	dsn="postgres:///perflab?host=$sock&port=5432&user=perflab&sslmode=disable"
	export PGOPTIONS="-c client_min_messages=warning"
	psql=("$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p 5432 -U perflab)
	# The generator comments the database when it has finished: a store cut
	# short (Ctrl-C, a full disk) is generated again.
	done_mark="console-bench hosts=$HOSTS runs=$RUNS"
	if [ "$fresh" = 1 ] || [ "$("${psql[@]}" -d postgres -tAc "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = 'perflab'" 2>/dev/null)" != "$done_mark" ]; then
		"${psql[@]}" -d postgres -c 'DROP DATABASE IF EXISTS perflab' -c 'CREATE DATABASE perflab'
		"$pl" runs import --db "$dsn" internal/serve/testdata/real-runs.json >/dev/null
		t0=$(date +%s)
		"${psql[@]}" -d perflab -v hosts="$HOSTS" -v runs="$RUNS" -f bench/console-gen.sql
		"${psql[@]}" -d perflab -c "COMMENT ON DATABASE perflab IS '$done_mark'"
		echo "# generated $HOSTS hosts × 2 probes × $RUNS runs in $(( $(date +%s) - t0 )) s"
	fi
	"${psql[@]}" -d perflab -tAc "SELECT '# store: ' || (SELECT count(DISTINCT host) FROM snapshots) || ' hosts, ' || (SELECT count(*) FROM runs) || ' runs, ' || (SELECT count(*) FROM samples) || ' samples, ' || pg_size_pretty(pg_database_size('perflab'))"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
# INDEX_CACHE: an index cache directory to use and keep; when it already
# holds the store's cache, the first start is not measured (a restart
# from it is what every cold row measures anyway).
cache=${INDEX_CACHE:-$work/cache}
start_serve() {
	"$pl" serve --db "$dsn" --listen "127.0.0.1:$port" --cache-dir "$cache" >>"$work/serve.log" 2>&1 &
	serve_pid=$!
	for _ in $(seq 1 600); do curl -fsS -o /dev/null "$base/healthz" 2>/dev/null && return; sleep 0.05; done
	echo "perflab serve did not start:" >&2; cat "$work/serve.log" >&2; exit 3
}
stop_serve() { kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=; }
get() { # URL [file] → seconds (appended to file, or printed), failing on anything but 200
	local out
	out=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' "$base$1")
	[ "${out%% *}" = 200 ] || { echo "GET $1: ${out%% *}: $(curl -sS "$base$1" | head -1)" >&2; return 3; }
	if [ -n "${2:-}" ]; then echo "${out#* }" >>"$2"; else echo "${out#* }"; fi
}
pct() { # seconds on stdin → "p50 p95 p99" in ms
	sort -g | awk '{v[NR]=$1} END {n=NR; split("0.50 0.95 0.99", q, " "); for (i=1;i<=3;i++) {k=int(q[i]*(n-1)+0.5)+1; printf "%s%.1f", (i>1?" ":""), v[k]*1000}}'
}

# The pages ask for what the store holds: the worst host (first on the
# hosts page: a planted outlier), the first host by name, two of the worst
# host's labels (oldest and newest) and its probes. Read after the first
# start below, from the server itself.
pick_pages() {
	read -r planted other probe1 probe2 < <(python3 - "$base" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def get(q): return json.load(urllib.request.urlopen(base + q))
worst = get("/?format=json&per=1")
first = get("/?format=json&per=1&sort=name")
probes = worst["probes"]
print(worst["hosts"][0]["host"], first["hosts"][0]["host"], probes[0], probes[-1])
PY
)
	read -r lab1 lab2 < <(curl -sS "$base/runs?host=$planted&per=500&format=json" | python3 -c '
import json, sys
labels = [r["label"] for r in json.load(sys.stdin)["runs"] if r["label"]]
print(labels[-1] if labels else "none", labels[0] if labels else "none")')
	echo "# pages about host $planted (worst), $other (first by name), labels $lab1 and $lab2, probes $probe1 and $probe2"
}

# CPU seconds (user+system) of a process and its reaped children; of the
# private PostgreSQL cluster: the postmaster's reaped backends and the
# live ones. The index's CPU cost is less at the mercy of the load than
# its wall time.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14+$15+$16+$17)/hz}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_cpu() {
	[ "$started_pg" = 1 ] || { echo nan; return; } # not this script's cluster: not measured
	local pm t
	pm=$(head -1 "$pgdata/postmaster.pid")
	t=$(cpu_s "$pm")
	for c in $(cat "/proc/$pm/task/"*/children 2>/dev/null); do t=$(python3 -c "print($t + $(cpu_s "$c"))"); done
	echo "$t"
}

first_start=1
if [ -n "${INDEX_CACHE:-}" ] && ls "$cache"/console-index-*.json >/dev/null 2>&1; then first_start=0; fi
if [ "$first_start" = 1 ]; then
# First start: no cache file.
rm -rf "$cache"
t0=$(date +%s.%N)
pg0=$(pg_cpu)
start_serve
get / "$work/first" || echo nan >"$work/first" # over the deadline: the row says so, the rest is measured
first=$(cat "$work/first")
# Until the store's hosts are read, the page answers without them
# ("loaded": false); "listed" is when it first lists hosts.
listed_s=
for _ in $(seq 1 "${INDEX_WAIT:-1800}"); do # every 2 s (0.1 s until listed)
	pending=$(curl -sS "$base/?format=json&per=1" | python3 -c 'import json,sys; ix=json.load(sys.stdin)["index"]; print(ix["pending"] if ix.get("loaded", True) else -1)')
	[ "$pending" != -1 ] && [ -z "$listed_s" ] && listed_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 2))")
	[ "$pending" = 0 ] && break
	if [ -z "$listed_s" ]; then sleep 0.1; else sleep 2; fi
done
done_s=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
serve_cpu=$(cpu_s "$serve_pid")
pg_cpu_s=$(python3 -c "print(round(float('$(pg_cpu)') - float('$pg0'), 1))")
worse=$(curl -sS "$base/?format=json&verdict=worse&per=500" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["total"], " ".join(h["host"] for h in d["hosts"][:3]))')
else
	start_serve # from INDEX_CACHE
fi
if [ "${FIRST_ONLY:-0}" = 1 ]; then # the first start's figures only
	printf '| first start, hosts page (no index cache) | %.1f ms | | |\n' "$(python3 -c "print(float('$first')*1000)")"
	echo "| first start, first page listing hosts (after start) | $listed_s s | | |"
	echo "| first start, index complete (every verdict and audit) | $done_s s | | |"
	echo "# index complete: perflab serve used $serve_cpu CPU s, PostgreSQL $pg_cpu_s CPU s (load $(cut -d' ' -f1-3 /proc/loadavg))"
	exit 0
fi
pick_pages
pages=(
	"hosts|/"
	"hosts, JSON|/?format=json"
	"hosts, worse only|/?verdict=worse"
	"hosts, name filter, page 3|/?host=${other:0:7}&page=3&per=20"
	"hosts, probe and label filter|/?probe=$probe1&label=$lab2"
	"history, 1 host|/history?probe=$probe1&host=$planted"
	"history, 3 hosts|/history?probe=$probe2&host=$other&host=$planted"
	"compare two hosts|/compare?s=host:$planted&s=host:$other"
	"compare two labels|/compare?s=$lab1&s=$lab2"
	"compare, JSON|/compare?s=host:$planted&s=host:$other&format=json"
	"runs, first page|/runs"
	"runs, page 100|/runs?page=100"
	"runs of one host|/runs?host=$planted&probe=$probe1"
	"audit|/audit?host=$planted"
	"snapshots|/snapshots?host=$planted"
	"flame (no --flame)|/flame"
)
stop_serve
if [ "$first_start" = 1 ]; then
	printf '| first start, hosts page (no index cache) | %.1f ms | | |\n' "$(python3 -c "print(float('$first')*1000)")"
	echo "| first start, first page listing hosts (after start) | $listed_s s | | |"
	echo "| first start, index complete (every verdict and audit) | $done_s s | | |"
	echo "# index complete: perflab serve used $serve_cpu CPU s, PostgreSQL $pg_cpu_s CPU s (load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo "# hosts with a worse verdict: $worse"
else
	echo "# first start not measured: the index cache in $cache was reused"
fi

echo "| page | cold p50 / p95 / p99 ms ($COLD restarts) | warm p50 / p95 / p99 ms ($WARM requests) |"
echo "|---|---|---|"
for pg in "${pages[@]}"; do
	name=${pg%%|*} url=${pg#*|}
	[[ -z "${ONLY:-}" || "$name" =~ $ONLY ]] || continue
	: >"$work/cold"
	: >"$work/warm"
	# A page that fails (e.g. 503: over the server's request deadline) is
	# a row saying so, and the other pages are still measured.
	failed=
	for _ in $(seq 1 "$COLD"); do start_serve; get "$url" "$work/cold" 2>>"$work/failed" || failed=1; stop_serve; done
	if [ -n "$failed" ]; then
		echo "| $name | failed: $(tail -1 "$work/failed") | |"
		continue
	fi
	start_serve
	get "$url" >/dev/null
	for _ in $(seq 1 "$WARM"); do get "$url" "$work/warm"; done
	stop_serve
	cold=$(pct <"$work/cold") warm=$(pct <"$work/warm")
	echo "| $name | ${cold// / \/ } | ${warm// / \/ } |"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
