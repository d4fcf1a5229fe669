#!/usr/bin/env bash
# bench/console-gen.sql is reproducible: the same seed gives the same
# store, to the byte of every sample, run and snapshot; another seed gives
# another. Generates HOSTS (20) hosts × RUNS (10) runs per probe three
# times (seed 1, seed 1, seed 2) in a private PostgreSQL cluster (a unix
# socket in a temp dir, no TCP port), compares checksums, prints the
# generation times, and removes the cluster. Exit 0 when reproducible.
#
#   bench/console-gen-check.sh
#   HOSTS=1000 RUNS=50 bench/console-gen-check.sh   # also times a larger store
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/pg.sh
HOSTS=${HOSTS:-20}
RUNS=${RUNS:-10}
SQL=${SQL:-bench/console-gen.sql} # the generator to check (an older one, for a before/after)
work=$(mktemp -d /tmp/console-gen-check-XXXXXX)
chmod 755 "$work"
pgbin=$(pg_bin)
pgdata=$work/pg
sock=$work/sock
started_pg=0
cleanup() {
	[ "$started_pg" = 1 ] && pg_stop "$pgdata" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
pl=${PERFLAB_BIN:-$work/perflab}
[ -n "${PERFLAB_BIN:-}" ] || go build -o "$pl" ./cmd/perflab
pg_init "$pgdata"
pg_start "$pgdata" "$sock" fsync=off
started_pg=1
export PGOPTIONS="-c client_min_messages=warning"
psql=("$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p 5432 -U perflab)

# sum DB: one checksum over every sample, run document and snapshot
# document, each in key order.
sum() {
	"${psql[@]}" -d "$1" -tAc "SELECT md5(
		(SELECT md5(string_agg(run_id || ' ' || metric || ' ' || iteration || ' ' || float8send(value)::text, E'\n' ORDER BY run_id, metric, iteration)) FROM samples) ||
		(SELECT md5(string_agg(id || ' ' || doc, E'\n' ORDER BY id)) FROM runs) ||
		(SELECT md5(string_agg(id || ' ' || doc, E'\n' ORDER BY id)) FROM snapshots))"
}
declare -A sums
for c in a:1 b:1 c:2; do
	db=gen_${c%%:*} seed=${c##*:}
	"${psql[@]}" -d postgres -c "CREATE DATABASE $db"
	"$pl" runs import --db "postgres:///$db?host=$sock&port=5432&user=perflab&sslmode=disable" internal/serve/testdata/real-runs.json >/dev/null
	t0=$(date +%s.%N)
	"${psql[@]}" -d "$db" -v hosts="$HOSTS" -v runs="$RUNS" -v seed="$seed" -f "$SQL"
	t1=$(date +%s.%N)
	sums[$db]=$(sum "$db")
	printf 'seed %s: %s hosts × 2 probes × %s runs generated in %.2f s, checksum %s\n' "$seed" "$HOSTS" "$RUNS" "$(echo "$t1 - $t0" | bc)" "${sums[$db]}"
done
ok=0
[ "${sums[gen_a]}" = "${sums[gen_b]}" ] && echo "same seed, same store: yes" || { echo "same seed, same store: NO"; ok=1; }
[ "${sums[gen_a]}" != "${sums[gen_c]}" ] && echo "another seed, another store: yes" || { echo "another seed, another store: NO"; ok=1; }
exit $ok
