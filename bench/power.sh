#!/bin/sh
# Time to a verdict (docs/statistics.md, docs/performance.md): two real
# sequential interleaved sessions of the cpu probe on CPU $CPU,
#   1. A/A: two states that change nothing (a verdict here other than
#      "equivalent"/"same" is a false positive);
#   2. a duty-cycled neighbour: a busy loop on the same CPU limited by a
#      CFS quota (cgroup v1 cpu controller, or v2 cpu.max) to $SHARE_PCT% of
#      it, off in one state and on in the other;
# each with `perflab bench --until-verdict --max-time $MAX_TIME`. It
# measures the neighbour's real share first (its CPU time over 10 s from
# /proc/PID/schedstat) and prints, per session, the verdict, the effect
# with its interval, the minutes measured and the paired spread of the
# blocks (what TestTimeToVerdictNoiseLimit maps onto power), with the load
# average beside them.
#
#   bench/power.sh                       # both sessions, 2 minutes at most each
#   MAX_TIME=4m bench/power.sh           # a longer limit
#   SESSIONS=neighbour bench/power.sh    # only the neighbour (or: aa)
#   REPEAT=3 bench/power.sh              # each session three times
#
# Needs root (the cgroup). Everything it creates (the cgroup, the
# neighbour, a temporary directory with the binary and the run database)
# is removed on exit, Ctrl-C included. About 2 × MAX_TIME × REPEAT plus
# half a minute.
set -eu
MAX_TIME=${MAX_TIME:-2m}
CPU=${CPU:-1}
SHARE_PCT=${SHARE_PCT:-2}
PERIOD_US=${PERIOD_US:-50000}
SESSIONS=${SESSIONS:-"aa neighbour"}
REPEAT=${REPEAT:-1}
cd "$(dirname "$0")/.."

tmp=$(mktemp -d /tmp/perflab-power.XXXXXX)
cg=""
cleanup() {
	if [ -f "$tmp/neighbour.pid" ]; then kill "$(cat "$tmp/neighbour.pid")" 2>/dev/null || true; fi
	sleep 0.2
	if [ -n "$cg" ] && [ -d "$cg" ]; then rmdir "$cg" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

CGO_ENABLED=0 go build -o "$tmp/perflab" ./cmd/perflab

# The neighbour's cgroup: quota SHARE_PCT% of PERIOD_US on one CPU.
quota=$((PERIOD_US * SHARE_PCT / 100))
if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	cg=/sys/fs/cgroup/cpu/perflab-power-$$
	mkdir "$cg"
	echo "$PERIOD_US" > "$cg/cpu.cfs_period_us"
	echo "$quota" > "$cg/cpu.cfs_quota_us"
	tasks=$cg/tasks
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup/perflab-power-$$
	mkdir "$cg"
	echo "$quota $PERIOD_US" > "$cg/cpu.max"
	tasks=$cg/cgroup.procs
else
	echo "power.sh: no cgroup cpu controller to limit the neighbour; run as root on a host with cgroups" >&2
	exit 2
fi

# on/off: the states' commands. The neighbour joins the cgroup, then
# becomes a busy loop pinned to $CPU; its output goes nowhere so the state
# command returns at once.
cat > "$tmp/on" <<EOF
#!/bin/sh
[ -f "$tmp/neighbour.pid" ] && exit 0
setsid sh -c 'echo \$\$ > "$tasks"; exec taskset -c $CPU sh -c "while :; do :; done"' </dev/null >/dev/null 2>&1 &
echo \$! > "$tmp/neighbour.pid"
sleep 0.05
EOF
cat > "$tmp/off" <<EOF
#!/bin/sh
[ -f "$tmp/neighbour.pid" ] || exit 0
kill \$(cat "$tmp/neighbour.pid") 2>/dev/null
rm -f "$tmp/neighbour.pid"
EOF
chmod +x "$tmp/on" "$tmp/off"

# The neighbour's measured share of the CPU, alone, over 10 s.
"$tmp/on"
pid=$(cat "$tmp/neighbour.pid")
t0=$(cut -d' ' -f1 "/proc/$pid/schedstat")
sleep 10
t1=$(cut -d' ' -f1 "/proc/$pid/schedstat")
"$tmp/off"
echo "neighbour: quota $quota us per $PERIOD_US us on CPU $CPU; measured share over 10 s: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f%%", (b-a)/1e7/10}')"

# session NAME STATE_A STATE_B: one sequential session, and its summary.
session() {
	name=$1
	db=$tmp/$name.db
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	"$tmp/perflab" bench probe:cpu --cpus "$CPU" --param threads=1 --param duration=200ms \
		--state "$2" --state "$3" --until-verdict --max-time "$MAX_TIME" --no-noise-check \
		--db "$db" --label "$name" --format json -o "$tmp/$name.json" 2>"$tmp/$name.err" || {
		tail -5 "$tmp/$name.err" >&2
		return 1
	}
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	# The paired spread: sd over blocks of ln(median b) − ln(median a).
	sd=$("$tmp/perflab" runs export --db "$db" 2>/dev/null | jq -r '
		def med: sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
		[.runs[] | {b: .block, s: .state, m: ([.samples[].value] | med)}]
		| group_by(.b) | map(select(length == 2) | sort_by(.s) | ((.[1].m | log) - (.[0].m | log)))
		| if length < 2 then "n/a" else ((add / length) as $m | (map((. - $m) * (. - $m)) | add) / (length - 1) | sqrt * 100 | tostring | .[0:5]) + "%" end')
	jq -r --arg name "$name" --arg sd "$sd" --arg l0 "$load0" --arg l1 "$load1" '
		.effects[0] as $e
		| "\($name): \($e.verdict) after \(.seconds | floor)s (\(.seconds / 60 * 100 | round / 100) min, \(.blocks) blocks, stopped by \(.stopped));"
		+ " effect \($e.delta_pct * 100 | round / 100)% [\($e.delta_lo_pct * 100 | round / 100)%, \($e.delta_hi_pct * 100 | round / 100)%]"
		+ " at \(((1 - (.alpha // 0.05)) * 1000 | round) / 10)% confidence; paired sd a block \($sd); load average \($l0) → \($l1)"' \
		"$tmp/$name.json"
}

i=1
while [ "$i" -le "$REPEAT" ]; do
	for s in $SESSIONS; do
		case $s in
		aa) session aa-$i a=true b=true ;;
		neighbour) session neighbour-$i "off=$tmp/off" "on=$tmp/on" ;;
		*) echo "power.sh: unknown session $s (aa, neighbour)" >&2; exit 2 ;;
		esac
	done
	i=$((i + 1))
done
"$tmp/off"
