#!/usr/bin/env bash
# Where `perflab audit`'s time goes: process start-up against the work.
# Runs, interleaved (so a neighbour's load falls on every command alike),
# RUNS times each:
#   hello     a static Go hello world: the floor of any Go process here
#   version   `perflab --version`: perflab's own start-up (package
#             initialisation, runtime, page faults of the binary), no work
#   audit     `perflab audit --format json`: start-up plus the snapshot and
#             the audit
# and prints, per command, the median wall time, CPU time (user+system,
# from wait4's rusage) and minor page faults. audit − version is the work;
# version − hello is what perflab's size and initialisers add to a Go
# process. CPU time and page faults are the figures a loaded machine
# disturbs least.
#
#   bench/startup.sh                        # RUNS=200; about 20 s on a quiet machine
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
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RUNS" "$tmp" "${OLD:-}" <<'PY'
import os, statistics, subprocess, sys, time
runs, tmp, old = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cmds = [("hello", [f"{tmp}/hello/hello"]),
        ("perflab --version", [f"{tmp}/perflab", "--version"]),
        ("perflab audit --format json", [f"{tmp}/perflab", "audit", "--format", "json"])]
if old:
    cmds += [("old --version", [old, "--version"]), ("old audit --format json", [old, "audit", "--format", "json"])]
res = {n: [] for n, _ in cmds}
devnull = os.open(os.devnull, os.O_WRONLY)
for i in range(runs + 3):
    for name, argv in cmds:
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
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "budget: perflab audit end to end ≤ 10 ms median (wall)"
