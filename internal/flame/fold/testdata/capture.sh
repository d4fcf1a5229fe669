#!/usr/bin/env bash
# Regenerates the perf script fixtures in this directory from workloads run
# on the local machine, and the expected folded outputs from the reference
# folder (inferno-collapse-perf; `cargo install inferno`). Needs root (or
# perf_event_paranoid <= 1), perf, gcc, g++, go, redis and fio.
#
#   bash internal/flame/fold/testdata/capture.sh
#
# Fixtures are gzipped perf script text; expected/NAME.FLAGS.folded.gz hold the
# reference output for each flag set, so the tests run without inferno.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/perflab-flame-workloads   # fixed, so paths in the fixtures are stable
mkdir -p "$work"
cd "$work"

gcc -O2 -g -fno-omit-frame-pointer -o cpu "$here/workloads/cpu.c"
g++ -O2 -g -fno-omit-frame-pointer -o templates "$here/workloads/templates.cpp"
# named java so that the folder applies its Java name tidying
gcc -O1 -fno-omit-frame-pointer -o java "$here/workloads/jit.c"
cp "$here/workloads/gowork.go" . && GOFLAGS= go build -o gowork gowork.go

F=(-F +pid)
rec() { # rec NAME PERF-RECORD-ARGS... -- CMD
  local name=$1; shift
  perf record -q -o "$name.data" -g "$@" >/dev/null 2>&1
  perf script -i "$name.data" 2>/dev/null | gzip -9n > "$here/$name.perf.txt.gz"
  perf script -i "$name.data" "${F[@]}" 2>/dev/null | gzip -9n > "$here/$name-pidtid.perf.txt.gz"
}

rec c-cpu -e cpu-clock -F 499 -- ./cpu 800000
rec cpp-templates -e cpu-clock -F 499 -- ./templates 60000
rec jit -e cpu-clock -F 499 -- ./java 8000
rec go -e cpu-clock -F 499 -- ./gowork 200000
# Two event types in one capture: only the first is folded by default.
rec mixed-events -e cpu-clock -e task-clock -F 299 -- ./cpu 100000
# Kernel-heavy I/O.
rec dd -e cpu-clock -F 499 -- dd if=/dev/zero of="$work/dd.out" bs=64k count=20000 conv=fsync status=none
rm -f "$work/dd.out"
rec fio -e cpu-clock -F 499 -- fio --name=rw --filename="$work/fio.out" --size=64m --rw=randrw --bs=4k \
  --ioengine=psync --direct=1 --runtime=1 --time_based --output=/dev/null
rm -f "$work/fio.out"
# redis under load, system-wide so both server and client are in it.
redis-server --port 56379 --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile "$work/redis.pid" >/dev/null
sleep 0.5
( redis-benchmark -h 127.0.0.1 -p 56379 -q -n 60000 -c 20 -t set,get,lpush >/dev/null ) &
rec redis -e cpu-clock -F 299 -a -- sleep 1
wait
kill "$(cat "$work/redis.pid")" || true

# Expected outputs from the reference folder.
mkdir -p "$here/expected"
rm -f "$here"/expected/*.folded "$here"/expected/*.folded.gz
for f in "$here"/*.perf.txt.gz; do
  name=$(basename "$f" .perf.txt.gz)
  for flags in "" --pid --tid --kernel --jit --all --addrs "--tid --all --addrs"; do
    tag=${flags:-default}; tag=${tag//--/}; tag=${tag// /+}
    gunzip -c "$f" | inferno-collapse-perf -q $flags | gzip -9n > "$here/expected/$name.$tag.folded.gz"
  done
  case $name in mixed-events*)
    gunzip -c "$f" | inferno-collapse-perf -q --event-filter task-clock | gzip -9n > "$here/expected/$name.event=task-clock.folded.gz";;
  esac
done
ls -la "$here" "$here/expected" | head -80
