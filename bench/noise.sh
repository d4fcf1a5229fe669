#!/usr/bin/env bash
# noise.sh — is a probe's spread its own, or the host's? Runs the reference
# tool and the perflab probe in alternating blocks, with samples of the same
# length (1 s), and prints the coefficient of variation of each block. When
# the reference tool's CV moves with perflab's, the spread belongs to the
# host (other tenants of a cloud host share its memory bus, caches and
# cores, and a guest cannot see them); when perflab's is higher, the probe
# adds noise of its own.
#
#   bench/noise.sh [BLOCKS] [CHECK...]
#
# BLOCKS (default 3) blocks of N (default 10) samples per side and check.
# CHECKs: cpu memread memwrite (default: all). Environment: PERFLAB (binary,
# default: perflab on PATH, else go run ./cmd/perflab), N.
# Needs: sysbench, python3. The docs/probes.md "Spread" table came from it.
set -euo pipefail

BLOCKS=${1:-3}
shift || true
CHECKS=${*:-cpu memread memwrite}
N=${N:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

PERFLAB=${PERFLAB:-$(command -v perflab || true)}
if [[ -z $PERFLAB ]]; then
	PERFLAB=$work/perflab
	go build -o "$PERFLAB" ./cmd/perflab
fi

# cv: the coefficient of variation (sample standard deviation / mean, %) of
# the numbers on stdin.
cv() { awk '{s += $1; q += $1 * $1; n++} END {m = s / n; printf "%.2f", 100 * sqrt((q - n * m * m) / (n - 1)) / m}'; }

# perflab_cv PROBE METRIC ARGS...: CV of N 1-second samples from one run.
perflab_cv() {
	local name=$1 metric=$2
	shift 2
	"$PERFLAB" bench "probe:$name" --no-store --warmup 1 --min-runs "$N" --max-runs "$N" --budget 10m --format json "$@" 2>/dev/null |
		python3 -c "import json,sys; print('%.2f' % (100 * next(m['cv'] for r in json.load(sys.stdin) for m in r['metrics'] if m['name'] == sys.argv[1])))" "$metric"
}

# ref_cv CMD: CV of N runs of CMD, each printing one number.
ref_cv() {
	for ((i = 0; i < N; i++)); do eval "$1"; done | cv
}

sysmem() {
	echo "sysbench memory --memory-block-size=256M --memory-total-size=1000G --memory-oper=$1 --memory-access-mode=seq --memory-scope=local --threads=1 --time=1 run | sed -n 's/.*(\([0-9.]*\) MiB\/sec).*/\1/p'"
}

printf '%-22s %5s %14s %14s\n' check block 'reference cv%' 'perflab cv%'
for c in $CHECKS; do
	for ((b = 1; b <= BLOCKS; b++)); do
		case $c in
		cpu)
			r=$(ref_cv "sysbench cpu --cpu-max-prime=10000 --threads=1 --time=1 run | awk '/events per second/{print \$4}'")
			p=$(perflab_cv cpu events_per_sec.t1 --param threads=1 --param duration=1s)
			label="cpu t1 (sysbench)"
			;;
		memread)
			r=$(ref_cv "$(sysmem read)")
			p=$(perflab_cv memory.bandwidth read.t1 --param ops=read --param threads=1 --param duration=1s)
			label="memory read t1"
			;;
		memwrite)
			r=$(ref_cv "$(sysmem write)")
			p=$(perflab_cv memory.bandwidth write.t1 --param ops=write --param threads=1 --param duration=1s)
			label="memory write t1"
			;;
		*)
			echo "unknown check $c" >&2
			exit 2
			;;
		esac
		printf '%-22s %5d %14s %14s\n' "$label" "$b" "$r" "$p"
	done
done
