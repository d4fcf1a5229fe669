#!/usr/bin/env bash
# memcpy.sh — why perflab's memory.bandwidth copy and mbw disagree (amd64).
# mbw times one glibc memcpy of its whole array; the probe times Go's copy(),
# whose runtime memmove streams blocks of 1 MiB and more with non-temporal
# stores. This compiles glibc's memcpy and a C loop with Go's strategy and
# runs them next to mbw and the probe, in rounds, on the same 128 MiB
# buffers. docs/probes.md ("memory copy") quotes its output.
#
#   bench/memcpy.sh [ROUNDS]        (needs gcc with AVX2, mbw, go)
set -euo pipefail
ROUNDS=${1:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/glibc" "$here/memcpy/glibc.c"
gcc -O2 -mavx2 -o "$work/ntloop" "$here/memcpy/ntloop.c"
PERFLAB=${PERFLAB:-$(command -v perflab || true)}
if [[ -z $PERFLAB ]]; then
	PERFLAB=$work/perflab
	(cd "$here/.." && go build -o "$PERFLAB" ./cmd/perflab)
fi
for ((r = 1; r <= ROUNDS; r++)); do
	echo "# round $r"
	mbw -q -n 10 -t0 128 | awk '/^AVG/ {for (i = 1; i <= NF; i++) if ($i == "Copy:") printf "mbw -t0 (glibc memcpy, one call): %.2f GB/s\n", $(i + 1) * 1.048576e-3}'
	"$work/glibc"
	"$work/glibc" $((4 << 20))
	"$work/glibc" $((256 << 10))
	"$work/ntloop"
	"$PERFLAB" bench probe:memory.bandwidth --no-store --param ops=copy --param threads=1 --param size=256MiB --format json 2>/dev/null |
		python3 -c "import json,sys; m=json.load(sys.stdin)[0]['metrics'][0]; print('perflab memory.bandwidth copy.t1 (Go copy, 4 MiB calls): %.2f GB/s (median, n=%d)' % (m['median'], m['n']))"
done
