#!/usr/bin/env bash
# http-ceiling.sh — is perflab's http: load generator the bottleneck? Runs
# wrk and 'perflab bench http://…' against the same private nginx
# (worker_processes 1, loopback) in alternating rounds at the same
# connections and sample length, and prints for each: requests/s and the
# load generator's CPU time per request (user+sys from /usr/bin/time, over
# the whole process: perflab's start-up and the monitor are in it, so its
# figure is an upper bound). On a host where the generator and nginx share
# the cores, CPU per request is what decides how much of the host is left
# to the server; requests/s alone moves with the other tenants.
#
#   bench/http-ceiling.sh [ROUNDS] [CONNECTIONS]
#
# ROUNDS default 3, CONNECTIONS default 10; KEEPALIVE=false for a new
# connection per request. Environment: PERFLAB (binary, default: perflab on
# PATH, else built from ./cmd/perflab), SECONDS_PER_SAMPLE (default 3).
# Needs: nginx, wrk, python3, /usr/bin/time. docs/probes.md#http has the
# numbers from this machine.
set -euo pipefail

ROUNDS=${1:-3}
CONNS=${2:-10}
KEEPALIVE=${KEEPALIVE:-true}
SECS=${SECONDS_PER_SAMPLE:-3}
work=$(mktemp -d)
nginx_pid=
cleanup() {
	[[ -n $nginx_pid ]] && kill -KILL -- "-$nginx_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

PERFLAB=${PERFLAB:-$(command -v perflab || true)}
if [[ -z $PERFLAB ]]; then
	PERFLAB=$work/perflab
	go build -o "$PERFLAB" ./cmd/perflab
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/html"
head -c 612 /dev/zero | tr '\0' x >"$work/html/index.html"
user=""
[[ $(id -u) == 0 ]] && user="user root;"
cat >"$work/nginx.conf" <<CONF
daemon off; master_process on; worker_processes 1; $user
pid $work/nginx.pid; error_log $work/error.log warn;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000000;
  client_body_temp_path $work/cb; proxy_temp_path $work/p; fastcgi_temp_path $work/f; uwsgi_temp_path $work/u; scgi_temp_path $work/s;
  server { listen 127.0.0.1:$port backlog=4096; root $work/html; location / { } } }
CONF
setsid nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
url=http://127.0.0.1:$port/index.html
for _ in $(seq 50); do curl -sf -o /dev/null "$url" && break; sleep 0.1; done

wrk_hdr=()
[[ $KEEPALIVE == false ]] && wrk_hdr=(-H "Connection: close")

printf "%-6s %-8s %12s %16s\n" round tool "req/s" "CPU µs/request"
for r in $(seq "$ROUNDS"); do
	/usr/bin/time -f "%U %S" -o "$work/t" wrk -t2 -c"$CONNS" -d"${SECS}s" "${wrk_hdr[@]}" "$url" >"$work/w"
	rps=$(awk '/Requests\/sec/ {print $2}' "$work/w")
	reqs=$(awk '/requests in/ {print $1}' "$work/w")
	cpu=$(awk '{print $1 + $2}' "$work/t")
	printf "%-6s %-8s %12.0f %16.1f\n" "$r" wrk "$rps" "$(python3 -c "print($cpu * 1e6 / $reqs)")"

	/usr/bin/time -f "%U %S" -o "$work/t" "$PERFLAB" bench "$url" --param connections="$CONNS" --param duration="${SECS}s" \
		--param keepalive="$KEEPALIVE" --min-runs 1 --max-runs 1 --warmup 0 --precision 0 --no-store --no-noise-check --format json >"$work/p" 2>/dev/null
	rps=$(python3 -c "import json,sys; print(next(s['value'] for s in json.load(open(sys.argv[1]))[0]['samples'] if s['metric'] == 'requests_per_sec'))" "$work/p")
	cpu=$(awk '{print $1 + $2}' "$work/t")
	printf "%-6s %-8s %12.0f %16.1f\n" "$r" perflab "$rps" "$(python3 -c "print($cpu * 1e6 / ($rps * $SECS))")"
done
