#!/usr/bin/env bash
# runs push and runs history (issue 25.1, store side): push a SQLite store of
# 10,000 generated runs (100 hosts × 100 runs, from testdata/aa and
# testdata/roots by seed, internal/store/fleetgen) into a fresh PostgreSQL
# database, REPEAT times, then time `runs history` of one host and probe on
# the pushed store with hyperfine. Prints the rows of docs/performance.md's
# "Fleet store" table (runs push, runs history) with wall and user+sys CPU
# and the load average.
#
#   bench/push.sh                      build, generate, measure, clean up (~1–3 min quiet)
#   PERFLAB=/path/to/perflab bench/push.sh   measure that binary (e.g. an older build)
#   REPEAT=5 HISTORY_RUNS=40 bench/push.sh
#
# Everything lives in one temporary directory: a private PostgreSQL cluster
# (initdb, unix socket only, no TCP port; fsync=off as in bench/fleetstore.sh)
# and the SQLite source. The server is stopped and the directory removed on
# success, failure or Ctrl-C. Prefix with `nice -n 19 ionice -c3` on a
# shared machine; CPU time (user+sys) is steadier than wall time under load.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/pg.sh
REPEAT=${REPEAT:-3}
HISTORY_RUNS=${HISTORY_RUNS:-30}
SEED=${SEED:-1001}

PGBIN=$(pg_bin) || exit 2
command -v hyperfine >/dev/null || { echo "hyperfine missing: apt-get install hyperfine" >&2; exit 2; }

DIR=$(mktemp -d /tmp/perflab-push-bench.XXXXXX)
started=0
cleanup() {
	if [ "$started" = 1 ]; then pg_stop "$DIR/data" immediate 2>/dev/null || true; fi
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${PERFLAB:-}" ]; then
	CGO_ENABLED=0 go build -o "$DIR/perflab" ./cmd/perflab
	PERFLAB=$DIR/perflab
fi
CGO_ENABLED=0 go build -o "$DIR/fleetgen" ./bench/fleetgen
"$DIR/fleetgen" --db "$DIR/src.db" --hosts 100 --runs-per-host 100 --seed "$SEED" >"$DIR/plan.txt"
chmod 755 "$DIR"
chmod 644 "$DIR/src.db"
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
pg_init "$DIR/data"
PG_LOG=$DIR/log pg_start "$DIR/data" "$DIR" max_connections=60 fsync=off synchronous_commit=off full_page_writes=off
started=1
dsn() { printf 'postgres:///%s?host=%s&port=5432&user=perflab&sslmode=disable' "$1" "$DIR"; }
psqlc() { as_pg "$PGBIN/psql" -X -q -At -d "$(dsn "$1")" -c "$2"; }

machine="$(nproc) CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
day=$(date -u +%F)
load() { cut -d' ' -f1-3 /proc/loadavg; }
# The server's CPU seconds so far: its live processes' and the reaped
# backends' (counted in the postmaster's children's times).
TCK=$(getconf CLK_TCK)
pgcpu() {
	local pm; pm=$(head -1 "$DIR/data/postmaster.pid")
	# A client's backend exits after the client does; wait (up to 10 s)
	# until the postmaster has reaped it, so its CPU is in the count.
	for _ in $(seq 100); do
		[ "$(pgrep -c -P "$pm")" -le "$AUX" ] && break
		sleep 0.1
	done
	{ awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat"
	  for c in $(pgrep -P "$pm"); do awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || true; done
	} | awk -v t="$TCK" '{s += $1} END {printf "%.2f", s / t}'
}
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

# runs push: a fresh database each time (the first push of a host's history).
AUX=$(pgrep -c -P "$(head -1 "$DIR/data/postmaster.pid")") # checkpointer, writers, launchers: no client yet
walls=() cpus=() scpus=()
push_load0=$(load)
for i in $(seq "$REPEAT"); do
	psqlc postgres "DROP DATABASE IF EXISTS push" && psqlc postgres "CREATE DATABASE push"
	c0=$(pgcpu)
	/usr/bin/time -f '%e %U %S' -o "$DIR/time" "$PERFLAB" runs push --db "$(dsn push)" --from "$DIR/src.db" --format json >"$DIR/push.json"
	c1=$(pgcpu)
	read -r w u s <"$DIR/time"
	walls+=("$w"); cpus+=("$(echo "$u + $s" | bc)"); scpus+=("$(echo "$c1 - $c0" | bc)")
	echo "push $i: ${w} s wall, perflab ${u} s user + ${s} s sys, server $(echo "$c1 - $c0" | bc) s CPU; $(tr -d '\n ' <"$DIR/push.json")" >&2
done
push_load1=$(load)
got=$(psqlc push "SELECT count(*) FROM runs")
samples=$(psqlc push "SELECT count(*) FROM samples")
# Pushing again adds nothing and reads only ids.
/usr/bin/time -f '%e %U %S' -o "$DIR/time" "$PERFLAB" runs push --db "$(dsn push)" --from "$DIR/src.db" --format json >"$DIR/again.json"
read -r aw au as <"$DIR/time"

# runs history of one host and probe: the host with the planted change point.
host=$(sed -n 's/^planted: change point on \([^ ]*\) .*/\1/p' "$DIR/plan.txt")
metric=$(psqlc push "SELECT metric FROM run_metrics WHERE host = '$host' AND probe = 'syscall' LIMIT 1")
psqlc push "VACUUM ANALYZE" >/dev/null
hist_load0=$(load)
c0=$(pgcpu)
hyperfine -N -w 3 -r "$HISTORY_RUNS" --export-json "$DIR/h.json" \
	"$PERFLAB runs history syscall $metric --host $host --db $(dsn push) --format json" >/dev/null
c1=$(pgcpu)
hist_load1=$(load)
hist_server=$(echo "($c1 - $c0) * 1000 / ($HISTORY_RUNS + 3)" | bc)
start_cpu=$(hyperfine -N -w 3 -r "$HISTORY_RUNS" --export-json "$DIR/v.json" "$PERFLAB --version" >/dev/null &&
	python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print('%.0f' % (1000 * (r['user'] + r['system'])))" "$DIR/v.json")
hist=$(python3 - "$DIR/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
t = sorted(r["times"])
p95 = t[min(len(t) - 1, int(round(0.95 * (len(t) - 1))))]
print("%.0f ms min, %.0f ms median, %.0f ms p95 of %d; %.0f ms CPU per call (user %.0f + sys %.0f)" % (
    1000 * t[0], 1000 * r["median"], 1000 * p95, len(t), 1000 * (r["user"] + r["system"]), 1000 * r["user"], 1000 * r["system"]))
print("%.0f" % (1000 * p95))
PY
)
hist_p95=$(echo "$hist" | tail -1)
hist="$(echo "$hist" | head -1), of which ${start_cpu} ms is process start ('perflab --version'); PostgreSQL ${hist_server} ms CPU per call"

pw=$(med "${walls[@]}"); pc=$(med "${cpus[@]}"); ps=$(med "${scpus[@]}")
echo
echo "| budget | measured | date | machine | load (1/5/15 min) | met? |"
echo "|---|---|---|---|---|---|"
echo "| runs push of 10,000 runs ≤ 30 s | ${pw} s wall; CPU ${pc} s perflab + ${ps} s PostgreSQL (user+sys; medians of $REPEAT; SQLite → fresh PostgreSQL database, $got runs / $samples samples stored); pushing again: ${aw} s | $day | $machine | $push_load0 → $push_load1 | $(awk -v w="$pw" 'BEGIN{print (w<=30)?"met":"not met"}') |"
echo "| runs history, one host and probe ≤ 200 ms | $hist (hyperfine, process start included) | $day | $machine | $hist_load0 → $hist_load1 | $([ "$hist_p95" -le 200 ] && echo met || echo 'not met') |"
