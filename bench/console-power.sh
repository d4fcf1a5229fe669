#!/usr/bin/env bash
# Power of the console's per-host verdict (the hosts page: a host's newest
# run against its earlier runs, compare's verdict) on the generated fleet
# store of bench/console-gen.sql: every run drifts by σ 1%, every sample by
# σ 0.3%; every PLANT_EVERY-th host's newest cpu run is DROP slower.
# For each DROP it prints the fraction of planted hosts whose cpu verdict is
# "worse" and the fraction of unplanted hosts with any better/worse verdict
# (false alarms, either probe); docs/serve.md ("Power of the hosts page's
# verdict") holds the results.
#
#   bench/console-power.sh                           # 400 hosts, 5 runs, drops 20% 5% 2%
#   HOSTS=1000 RUNS=10 DROPS="0.2 0.05" bench/console-power.sh
#   DETAIL=1 bench/console-power.sh                  # also every planted host's delta, and
#                                                    # 'perflab compare' on the first three
#
# Knobs: HOSTS (400), RUNS per probe and host (5), PLANT_EVERY (2: half the
# hosts planted, so both fractions have ~HOSTS/2 hosts), DROPS ("0.2 0.05
# 0.02"). Everything runs in a private PostgreSQL cluster (unix socket in a
# temp dir, no TCP) and a private 'perflab serve' on a free loopback port;
# both are removed on exit. About 1 minute per DROP at the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/pg.sh
HOSTS=${HOSTS:-400}
RUNS=${RUNS:-5}
PLANT_EVERY=${PLANT_EVERY:-2}
DROPS=${DROPS:-0.2 0.05 0.02}
work=$(mktemp -d /tmp/console-power-XXXXXX)
chmod 755 "$work"
pgbin=$(pg_bin)
pgdata=$work/pg
sock=$work/sock
serve_pid=
started_pg=0

cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
	[ "$started_pg" = 1 ] && pg_stop "$pgdata" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $HOSTS hosts × 2 probes × $RUNS runs, every $PLANT_EVERY. host planted"
go build -o "$work/perflab" ./cmd/perflab
pl=$work/perflab

pg_init "$pgdata"
pg_start "$pgdata" "$sock" fsync=off
started_pg=1
dsn="postgres:///perflab?host=$sock&port=5432&user=perflab&sslmode=disable"
export PGOPTIONS="-c client_min_messages=warning"
psql=("$pgbin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p 5432 -U perflab)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port

echo "| drop | planted hosts | called worse | unplanted hosts | called better or worse | of which host drift |"
echo "|---|---|---|---|---|---|"
for drop in $DROPS; do
	"${psql[@]}" -d postgres -c 'DROP DATABASE IF EXISTS perflab' -c 'CREATE DATABASE perflab'
	"$pl" runs import --db "$dsn" internal/serve/testdata/real-runs.json >/dev/null
	"${psql[@]}" -d perflab -v hosts="$HOSTS" -v runs="$RUNS" -v plant_every="$PLANT_EVERY" -v drop="$drop" -f bench/console-gen.sql
	"$pl" serve --db "$dsn" --listen "127.0.0.1:$port" --cache-dir "" >>"$work/serve.log" 2>&1 &
	serve_pid=$!
	for _ in $(seq 1 600); do curl -fsS -o /dev/null "$base/healthz" 2>/dev/null && break; sleep 0.1; done
	for _ in $(seq 1 1800); do
		pending=$(curl -fsS "$base/?format=json&per=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["index"]["pending"])')
		[ "$pending" -le 0 ] && break
		sleep 1
	done
	python3 - "$base" "$drop" "$PLANT_EVERY" "${DETAIL:-0}" "$pl" "$dsn" <<'PY'
import json, subprocess, sys, urllib.request
base, drop, every, detail, pl, dsn = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5], sys.argv[6]
hosts, page = [], 0
while True:
    d = json.load(urllib.request.urlopen(f"{base}/?format=json&sort=name&per=500&page={page}"))
    hosts += d["hosts"]
    if len(hosts) >= d["total"] or not d["hosts"]:
        break
    page += 1
planted = [h for h in hosts if int(h["host"].split("-")[1]) % every == 0]
others = [h for h in hosts if int(h["host"].split("-")[1]) % every != 0]
def cpu(h):
    return next((x for x in h["drift"] if x["probe"] == "cpu"), None)
worse = [h for h in planted if (cpu(h) or {}).get("verdict") == "worse"]
alarms = [h for h in others if any(x["verdict"] in ("better", "worse") for x in h["drift"])]
hd = [h for h in alarms if all(x.get("host_drift") for x in h["drift"] if x["verdict"] in ("better", "worse"))]
pct = lambda a, b: f"{len(a)}/{len(b)} ({100 * len(a) / max(1, len(b)):.1f}%)"
print(f"| {100 * drop:g}% | {len(planted)} | {pct(worse, planted)} | {len(others)} | {pct(alarms, others)} | {len(hd)} |")
if detail:
    f = lambda x: "-" if x is None else f"{x:+.1f}"
    print("# host newest median-of-earlier Δ% [lo, hi] verdict host_drift calibration reason")
    for h in planted:
        c = cpu(h)
        print(f"# {h['host']} {c['latest']:.0f} {c['median_30d']:.0f} {f(c['delta_pct'])} [{f(c['delta_lo_pct'])}, {f(c['delta_hi_pct'])}] {c['verdict']} {c.get('host_drift', False)} {c['calibration_runs']} {c.get('reason', '')}")
    for h in (alarms)[:5]:
        for c in h["drift"]:
            print(f"# unplanted {h['host']} {c['probe']} {f(c['delta_pct'])} [{f(c['delta_lo_pct'])}, {f(c['delta_hi_pct'])}] {c['verdict']} {c.get('host_drift', False)} {c.get('reason', '')}")
    for h in planted[:3]:
        c = cpu(h)
        out = subprocess.run([pl, "compare", "--db", dsn, "--format", "json", ",".join(c["baseline_run_ids"]), c["run_id"]], capture_output=True, text=True)
        try:
            j = json.loads(out.stdout)
            dl = [x for x in j["pairs"][0]["deltas"] if x["probe"] == "cpu" and x["name"] == c["metric"]][0]
            print(f"# cli {h['host']} {c['metric']}: Δ {dl.get('delta_pct')} verdict {dl['verdict']} host_drift {dl.get('host_drift', False)} (console: {c['verdict']})")
        except Exception as e:
            print(f"# cli {h['host']}: exit {out.returncode} {out.stderr.strip()[:200]} {e}")
PY
	kill "$serve_pid"; wait "$serve_pid" 2>/dev/null || true; serve_pid=
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
