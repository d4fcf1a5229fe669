#!/usr/bin/env bash
# Fleet store at scale (issue 25.1, store side): generate a PostgreSQL store
# of 10,000 hosts and 1,000,000 runs from real runs and snapshots
# (go run ./bench/fleetgen), then measure the store's budgets and print the
# rows of docs/performance.md's "Fleet store" table.
#
#   bench/fleetstore.sh                 generate if needed, measure, stop the server
#   bench/fleetstore.sh --start         start the server (generating if needed), print the DSN, leave it running
#   bench/fleetstore.sh --stop          stop the server the script started
#   bench/fleetstore.sh --clean         stop it and delete the cluster (the generated store)
#   HOSTS=200 RUNS_PER_HOST=20 bench/fleetstore.sh   a smaller store (its own cluster directory)
#   PERFLAB_PG_DSN=postgres://… bench/fleetstore.sh  use that (empty) database instead of a private cluster
#
# The cluster lives in $FLEET_DIR (default /var/tmp/perflab-fleetstore-HOSTSxRUNS),
# listens only on a unix socket there, and is left in place between runs so the
# measurement can be repeated without regenerating (generation takes minutes).
# Seed: SEED (default 1). Repeats: REPEAT (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${HOSTS:-10000}
RUNS_PER_HOST=${RUNS_PER_HOST:-100}
SEED=${SEED:-1}
REPEAT=${REPEAT:-5}
FLEET_DIR=${FLEET_DIR:-/var/tmp/perflab-fleetstore-${HOSTS}x${RUNS_PER_HOST}}
mode=${1:-measure}
case "$mode" in measure|--start|--stop|--clean) ;; *) echo "usage: $0 [--start|--stop|--clean]" >&2; exit 2 ;; esac

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "${PERFLAB_PG_DSN:-}" ] || [ -x "$PGBIN/initdb" ] || { echo "PostgreSQL server binaries missing: apt-get install postgresql" >&2; exit 2; }
asdb() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
DATA=$FLEET_DIR/data
DSN_BASE="postgres:///%s?host=$FLEET_DIR&port=5432&user=perflab&sslmode=disable"
dsn() { printf "$DSN_BASE" "$1"; }
started_here=0
pg_running() { [ -f "$DATA/postmaster.pid" ] && asdb "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }
pg_start() {
	if [ ! -d "$DATA" ]; then
		mkdir -p "$FLEET_DIR"
		[ "$(id -u)" = 0 ] && chown postgres: "$FLEET_DIR"
		asdb "$PGBIN/initdb" -D "$DATA" -U perflab -A trust -E UTF8 --locale=C --no-sync >/dev/null
	fi
	if ! pg_running; then
		asdb "$PGBIN/pg_ctl" -D "$DATA" -l "$FLEET_DIR/log" -w -t 120 \
			-o "-k $FLEET_DIR -c listen_addresses= -p 5432 -c max_connections=250 -c shared_buffers=1GB -c max_wal_size=8GB -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
		started_here=1
	fi
}
pg_stop() { pg_running && asdb "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null || true; }
psqlc() { asdb "$PGBIN/psql" -X -q -At -d "$(dsn "$1")" -c "$2"; }

case "$mode" in
--stop) pg_stop; exit 0 ;;
--clean) pg_stop; rm -rf "$FLEET_DIR"; echo "removed $FLEET_DIR"; exit 0 ;;
esac

BIN=$(mktemp -d /tmp/fleetstore-bin.XXXXXX)
cleanup() {
	rm -rf "$BIN"
	if [ "$mode" = measure ] && [ "$started_here" = 1 ]; then pg_stop; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
CGO_ENABLED=0 go build -o "$BIN/perflab" ./cmd/perflab
CGO_ENABLED=0 go build -o "$BIN/fleetgen" ./bench/fleetgen

if [ -n "${PERFLAB_PG_DSN:-}" ]; then
	FLEET=$PERFLAB_PG_DSN
	PUSH=""
else
	pg_start
	psqlc postgres "SELECT 1 FROM pg_database WHERE datname='fleet'" | grep -q 1 || psqlc postgres "CREATE DATABASE fleet"
	FLEET=$(dsn fleet)
	PUSH=$(dsn push)
fi
n=$(asdb "$PGBIN/psql" -X -q -At -d "$FLEET" -c "SELECT count(*) FROM runs" 2>/dev/null || echo 0)
want=$((HOSTS * RUNS_PER_HOST))
if [ "$n" != "$want" ]; then
	resume=""
	if [ "$n" != 0 ]; then echo "the store holds $n of $want runs: resuming (for a full load time: $0 --clean first)"; resume=--resume; fi
	echo "generating $HOSTS hosts × $RUNS_PER_HOST runs (seed $SEED) into $FLEET"
	"$BIN/fleetgen" --db "$FLEET" --hosts "$HOSTS" --runs-per-host "$RUNS_PER_HOST" --seed "$SEED" $resume
	asdb "$PGBIN/psql" -X -q -d "$FLEET" -c "VACUUM ANALYZE"
fi
echo "store: $FLEET ($(asdb "$PGBIN/psql" -X -q -At -d "$FLEET" -c "SELECT pg_size_pretty(pg_database_size(current_database()))"))"
if [ "$mode" = --start ]; then echo "server left running; stop it with $0 --stop"; exit 0; fi

machine="$(nproc) CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
day=$(date -u +%F)
load() { cut -d' ' -f1-3 /proc/loadavg; }

# fleet report: wall time and peak RSS over REPEAT runs (median, max).
walls=() rss=()
for _ in $(seq "$REPEAT"); do
	/usr/bin/time -f '%e %M' -o "$BIN/time" "$BIN/perflab" fleet report --db "$FLEET" --format json >"$BIN/report.json"
	read -r w r <"$BIN/time"; walls+=("$w"); rss+=("$r")
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
mx() { printf '%s\n' "$@" | sort -g | tail -1; }
fr_wall=$(med "${walls[@]}"); fr_rss=$(( $(mx "${rss[@]}") / 1024 ))
fr_load=$(load)
planted=$(python3 - "$BIN/report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seen = set()
for m in d["metrics"]:
    for g in m["outlier_groups"]:
        f = g["separating_facts"][0] if g["separating_facts"] else None
        k = (m["probe"], len(g["hosts"]), f and f["fact"], f and f["value"])
        if k not in seen:
            seen.add(k)
            print(f"  {m['probe']}: {len(g['hosts'])} hosts {g['direction']} — {f['fact'] + '=' + f['value'] if f else 'unexplained'}")
PY
)

# runs history of one host and probe (the change-point host's syscall).
host=$(asdb "$PGBIN/psql" -X -q -At -d "$FLEET" -c "SELECT host FROM snapshots GROUP BY host HAVING count(*) > 1 LIMIT 1")
metric=$(asdb "$PGBIN/psql" -X -q -At -d "$FLEET" -c "SELECT metric FROM run_metrics WHERE host = '$host' AND probe = 'syscall' LIMIT 1")
hyperfine -N -w 2 -r $((REPEAT * 4)) --export-json "$BIN/h.json" \
	"$BIN/perflab runs history syscall $metric --host $host --db $FLEET --format json" >/dev/null
hist=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]['times']; r.sort(); print('%.0f %.0f' % (1000*r[len(r)//2], 1000*r[int(len(r)*0.95)-1 if len(r)>1 else 0]))" "$BIN/h.json")
hist_load=$(load)

# runs push of 10,000 runs from a SQLite store into a fresh database.
push_line="(skipped: needs the private cluster)"
if [ -n "$PUSH" ]; then
	"$BIN/fleetgen" --db "$BIN/push-src.db" --hosts 100 --runs-per-host 100 --seed $((SEED + 1000)) >/dev/null 2>&1
	pw=()
	for _ in $(seq 3); do
		psqlc postgres "DROP DATABASE IF EXISTS push" && psqlc postgres "CREATE DATABASE push"
		s=$(date +%s.%N)
		"$BIN/perflab" runs push --db "$PUSH" --from "$BIN/push-src.db" --format json >"$BIN/push.json"
		e=$(date +%s.%N)
		pw+=("$(echo "$e - $s" | bc)")
	done
	got=$(psqlc push "SELECT count(*) FROM runs")
	psqlc postgres "DROP DATABASE IF EXISTS push"
	push_line=$(printf '%.1f s (median of 3; %s runs stored)' "$(med "${pw[@]}")" "$got")
fi
push_load=$(load)

echo
echo "planted outliers the report names (first separating fact):"
echo "$planted"
echo
echo "| budget | measured | date | machine | load (1/5/15 min) | met? |"
echo "|---|---|---|---|---|---|"
echo "| fleet report over ${HOSTS} hosts / $want runs ≤ 5 s | ${fr_wall} s (median of $REPEAT) | $day | $machine | $fr_load | $(awk -v w="$fr_wall" 'BEGIN{print (w<=5)?"met":"not met"}') |"
echo "| fleet report ≤ 1 GiB RSS | ${fr_rss} MiB (max of $REPEAT) | $day | $machine | $fr_load | $([ "$fr_rss" -le 1024 ] && echo met || echo 'not met') |"
echo "| runs history, one host and probe ≤ 200 ms | $(echo "$hist" | cut -d' ' -f1) ms median, $(echo "$hist" | cut -d' ' -f2) ms p95 (process start included) | $day | $machine | $hist_load | $([ "$(echo "$hist" | cut -d' ' -f2)" -le 200 ] && echo met || echo 'not met') |"
echo "| runs push of 10,000 runs ≤ 30 s | $push_line | $day | $machine | $push_load | |"
