#!/usr/bin/env bash
# perflab --inventory over many lab hosts: builds a lab of N hosts (network
# namespaces with their own sshd and home, internal/testlab), runs
# `perflab audit --inventory --on all --forks F` (a snapshot and an audit
# of every host, each snapshot stored) first with nothing cached on the
# hosts, then at 10, 25 and N hosts with perflab's build cached there, and
# prints the wall time, per-host outcome counts, where a host's time went,
# and the controller's peak RSS and CPU. The lab is torn down at the end,
# on failure and on Ctrl-C. Needs root, iproute2, nftables, openssh-server.
# The budget (docs/performance.md, "Many hosts at once"): 50 hosts at
# --forks 10 in at most 20 s on a 2-core machine, memory flat in hosts.
#
#   bench/fanout.sh                 # N=50, FORKS=10
#   N=100 FORKS=20 bench/fanout.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-50}
FORKS=${FORKS:-10}
sizes="10,25,$N"
[ "$N" -le 25 ] && sizes="$N"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "load average: $(cat /proc/loadavg)"
CGO_ENABLED=0 go build -o "$dir/perflab" ./cmd/perflab
go build -o "$dir/fanoutbench" ./internal/testlab/fanoutbench
# fanoutbench removes its lab on exit and on SIGINT/SIGTERM; run it in the
# foreground so Ctrl-C reaches it.
"$dir/fanoutbench" -bin "$dir/perflab" -sizes "$sizes" -forks "$FORKS"
echo "load average: $(cat /proc/loadavg)"
