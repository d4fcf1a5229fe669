#!/usr/bin/env bash
# Where `perflab audit`'s time goes: process start-up against the work.
# Runs, interleaved (so a neighbour's load falls on every command alike),
# RUNS times each:
#   hello     a static Go hello world: the floor of any Go process here
#   version   `perflab --version`: perflab's own start-up (package
#             initialisation, runtime, page faults of the binary), no work
#   audit     `perflab audit --format json`: start-up plus the snapshot and
#             the audit
#   floor     bench/audit-floor: a static Go process doing only the
#             file-system operations `perflab audit` does beyond
#             `perflab --version` (captured with strace from this binary,
#             just before), on 2 goroutines as the audit's collector halves;
#             and the same on 1 goroutine. Its median is the floor of "a
#             process that reads these files on this kernel".
# in a fresh random order each round, and prints, per command, the median
# wall time, CPU time (user+system, from wait4's rusage) and minor page
# faults. audit − version is the work;
# version − hello is what perflab's size and initialisers add to a Go
# process; audit − floor is what perflab adds to the reads themselves.
# CPU time and page faults are the figures a loaded machine disturbs least.
# Without strace the floor rows are left out (with a note).
#
#   bench/startup.sh                        # RUNS=200; about 40 s on a quiet machine
#   OLD=/path/to/older/perflab bench/startup.sh   # also that binary, interleaved
#   PERFLAB_BIN=/path/to/perflab bench/startup.sh # that binary instead of a fresh build
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${PERFLAB_BIN:-}" ]; then
  cp "$PERFLAB_BIN" "$tmp/perflab"
else
  CGO_ENABLED=0 go build -o "$tmp/perflab" ./cmd/perflab
fi
mkdir "$tmp/hello"
printf 'package main\n\nimport "os"\n\nfunc main() { os.Stdout.WriteString("hello\\n") }\n' >"$tmp/hello/main.go"
printf 'module hello\n\ngo 1.22\n' >"$tmp/hello/go.mod"
(cd "$tmp/hello" && CGO_ENABLED=0 GOFLAGS= go build -o "$tmp/hello/hello" .)
floor=""
if command -v strace >/dev/null; then
  CGO_ENABLED=0 go build -o "$tmp/audit-floor" ./bench/audit-floor
  strace -f -y -s 4096 -e trace=openat,newfstatat,readlinkat -o "$tmp/audit.strace" "$tmp/perflab" audit --format json >/dev/null || [ $? = 1 ]
  strace -f -y -s 4096 -e trace=openat,newfstatat,readlinkat -o "$tmp/version.strace" "$tmp/perflab" --version >/dev/null
  python3 bench/audit-floor/capture.py "$tmp/audit.strace" "$tmp/version.strace" >"$tmp/floor.list"
  floor=$tmp/floor.list
  "$tmp/audit-floor" -top 12 "$floor" | sed 's/^/  /'
else
  echo "strace is not installed: no read-floor rows (apt-get install strace)" >&2
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RUNS" "$tmp" "${OLD:-}" "$floor" <<'PY'
import os, random, statistics, subprocess, sys, time
runs, tmp, old, floor = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
cmds = [("hello", [f"{tmp}/hello/hello"]),
        ("perflab --version", [f"{tmp}/perflab", "--version"]),
        ("perflab audit --format json", [f"{tmp}/perflab", "audit", "--format", "json"])]
if floor:
    cmds += [("read floor, 2 goroutines", [f"{tmp}/audit-floor", floor]),
             ("read floor, 1 goroutine", [f"{tmp}/audit-floor", "-workers", "1", floor])]
if old:
    cmds += [("old --version", [old, "--version"]), ("old audit --format json", [old, "audit", "--format", "json"])]
res = {n: [] for n, _ in cmds}
devnull = os.open(os.devnull, os.O_WRONLY)
rng = random.Random(1)
for i in range(runs + 3):
    # A fresh order each round: a command's place in the round (after a
    # heavy one, say) must not bias it.
    for name, argv in rng.sample(cmds, len(cmds)):
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=devnull, stderr=devnull)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            sys.exit(f"{name}: exit status {os.waitstatus_to_exitcode(status)}")
        if i >= 3:  # warm-up
            res[name].append((wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_utime * 1e3, ru.ru_stime * 1e3, ru.ru_minflt))
print(f"{'command':30} {'wall ms':>8} {'CPU ms':>8} {'user':>6} {'sys':>6} {'faults':>7}   (medians of {runs})")
med = {}
for name, _ in cmds:
    cols = list(zip(*res[name]))
    med[name] = [statistics.median(c) for c in cols]
    w, c, u, s, f = med[name]
    print(f"{name:30} {w:8.1f} {c:8.1f} {u:6.1f} {s:6.1f} {f:7.0f}")
a, v, h = med["perflab audit --format json"], med["perflab --version"], med["hello"]
print(f"start-up above a Go hello world (version − hello): CPU {v[1]-h[1]:.1f} ms, {v[4]-h[4]:.0f} page faults")
print(f"the snapshot and audit (audit − version): CPU {a[1]-v[1]:.1f} ms, {a[4]-v[4]:.0f} page faults")
if floor:
    f = med["read floor, 2 goroutines"]
    print(f"the reads alone (floor − hello): wall {f[0]-h[0]:.1f} ms, CPU {f[1]-h[1]:.1f} ms (sys {f[3]-h[3]:.1f}), {f[4]-h[4]:.0f} page faults")
    print(f"perflab above the read floor (audit − floor): wall {a[0]-f[0]:.1f} ms, CPU {a[1]-f[1]:.1f} ms, {a[4]-f[4]:.0f} page faults")
    verdict = "a machine limit for this file set" if f[0] > 10 else "under 10 ms: the gap to the budget is perflab's"
    load = os.getloadavg()[0]
    if load > os.cpu_count() / 2:
        verdict += f" — but the load average is {load:.1f}: wall times measure the neighbours, re-run on a quiet machine"
    print(f"read floor median {f[0]:.1f} ms wall: {verdict}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "budget: perflab audit end to end ≤ 10 ms median (wall)"
