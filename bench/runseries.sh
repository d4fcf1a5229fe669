#!/usr/bin/env bash
# Schema 8 (monitor series apart) before and after, on one generated store:
# docs/performance.md, "Monitor series apart (schema 8)".
#
#   bench/runseries.sh                       # 1,000 hosts × 2 probes × 100 runs (~15 min)
#   HOSTS=50 RUNS=10 bench/runseries.sh      # a smoke run (~2 min)
#
# 1. builds perflab at BEFORE (default da9f36c, the last schema 7 commit)
#    and at this tree;
# 2. bench/console.sh with the old binary generates the store at schema 7
#    in a private cluster (kept in a temporary directory for the run) and
#    measures the first start's index and the compare pages;
# 3. migrates the store to schema 8 (bench/fleetgen --migrate: wall time,
#    PostgreSQL CPU, sizes, documents left with a series);
# 4. bench/console.sh again with this tree's binary.
# Knobs: HOSTS (1000), RUNS (100), COLD (5), WARM (20), BEFORE (a commit).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/pg.sh
export HOSTS=${HOSTS:-1000} RUNS=${RUNS:-100} COLD=${COLD:-5} WARM=${WARM:-20}
BEFORE=${BEFORE:-da9f36c}
work=$(mktemp -d /tmp/runseries-bench-XXXXXX)
chmod 755 "$work"
pgbin=$(pg_bin)
pgdata=$work/pg
sock=$work/sock
started=0
cleanup() {
	[ "$started" = 1 ] && pg_stop "$pgdata" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); before = $BEFORE, after = $(git rev-parse --short HEAD)"
mkdir -p "$work/src"
git archive "$BEFORE" | tar -x -C "$work/src"
(cd "$work/src" && go build -o "$work/perflab-before" ./cmd/perflab)
go build -o "$work/perflab-after" ./cmd/perflab
go build -o "$work/fleetgen" ./bench/fleetgen

measure() { # label binary
	echo "## $1"
	PERFLAB_CONSOLE_PGDATA=$pgdata ONLY=compare INDEX_WAIT=${INDEX_WAIT:-900} PERFLAB_BIN=$2 bench/console.sh | grep -v '^# pages about'
}
measure "before (schema 7)" "$work/perflab-before"

# The migration, on the same cluster (bench/console.sh stopped it).
pg_start "$pgdata" "$sock" fsync=off shared_buffers=512MB max_wal_size=4GB
started=1
dsn="postgres:///perflab?host=$sock&port=5432&user=perflab&sslmode=disable"
psql=("$pgbin/psql" -X -q -At -h "$sock" -p 5432 -U perflab -d perflab)
pg_cpu() { # the cluster's CPU seconds: postmaster, its reaped backends and the live ones
	local pm t=0
	pm=$(head -1 "$pgdata/postmaster.pid")
	for p in $pm $(cat /proc/"$pm"/task/*/children); do
		t=$( (cat "/proc/$p/stat" 2>/dev/null || echo "x x x x x x x x x x x x x 0 0 0 0") | awk -v t="$t" -v hz="$(getconf CLK_TCK)" '{print t + ($14+$15+$16+$17)/hz}')
	done
	echo "$t"
}
echo "## migration to schema 8"
size() { "${psql[@]}" -c "SELECT pg_size_pretty(pg_database_size('perflab'))"; }
echo "# store $(size), schema $("${psql[@]}" -c 'SELECT version FROM schema_version'), load $(cut -d' ' -f1-3 /proc/loadavg)"
c0=$(pg_cpu)
"$work/fleetgen" --db "$dsn" --migrate
sleep 0.3
c1=$(pg_cpu)
echo "# PostgreSQL CPU $(python3 -c "print(round($c1 - $c0, 1))") s; store $(size), series rows $("${psql[@]}" -c 'SELECT count(*) FROM run_series'), documents still holding a series $("${psql[@]}" -c "SELECT count(*) FROM runs WHERE strpos(doc, ',\"monitor\":[') > 0"), load $(cut -d' ' -f1-3 /proc/loadavg)"
"${psql[@]}" -c 'VACUUM (ANALYZE) runs'
pg_stop "$pgdata"
started=0

measure "after (schema 8)" "$work/perflab-after"
