# shellcheck shell=bash
# bench/lib/pg.sh: a private PostgreSQL cluster for the bench scripts (a
# data directory of the caller's, a unix socket in a directory of the
# caller's, no TCP port), run as the postgres user when the caller is root.
# Sourced, not run, after the script's `cd` to the repository's root:
#
#   . bench/lib/pg.sh
#
# It defines functions only (no variables, no traps, nothing started):
#
#   pg_bin                 prints the newest /usr/lib/postgresql/N/bin; fails
#                          (with a message on stderr) when it has no initdb
#   as_pg CMD ARGS…        runs CMD as the postgres user when root, else as is
#   pg_init DIR            creates DIR (owned by postgres when root) and runs
#                          initdb there: superuser perflab, trust, UTF8, C
#                          locale, --no-sync; initdb's output discarded
#   pg_start DIR SOCKDIR [NAME=VALUE…]
#                          pg_ctl start of DIR, waiting up to 120 s: socket in
#                          SOCKDIR on port 5432, listen_addresses empty, and
#                          one -c NAME=VALUE per further argument (fsync=off
#                          is the caller's to ask for). SOCKDIR is created
#                          mode 777 when missing (the server, as postgres,
#                          writes its socket there); an existing one must be
#                          writable by the server. The server's log is
#                          SOCKDIR/pg.log, or $PG_LOG when set
#                          (PG_LOG=… pg_start …).
#   pg_stop DIR [MODE]     pg_ctl stop of DIR, mode fast unless MODE
#                          (immediate, smart), waiting for the end; stdout
#                          discarded, stderr and the exit status pg_ctl's
#   pg_running DIR         true when DIR has a postmaster.pid and pg_ctl
#                          status says the server runs
#
# The exit/Ctrl-C contract stays with the caller: it records that it
# started a server, and its own `trap cleanup EXIT` (with
# `trap 'exit 130' INT TERM`) calls pg_stop and removes its directories.
# These functions install no trap and remove nothing.

pg_bin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$d" ] && [ -x "$d/initdb" ] || { echo "PostgreSQL server binaries missing: apt-get install postgresql" >&2; return 2; }
	echo "$d"
}

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_init() {
	local bin
	bin=$(pg_bin) || return
	mkdir -p "$1" || return
	if [ "$(id -u)" = 0 ]; then chown postgres: "$1" || return; fi
	as_pg "$bin/initdb" -D "$1" -U perflab -A trust -E UTF8 --locale=C --no-sync >/dev/null
}

pg_start() {
	local bin dir=$1 sock=$2 opts o
	shift 2
	bin=$(pg_bin) || return
	if [ ! -d "$sock" ]; then mkdir -p "$sock" && chmod 777 "$sock" || return; fi
	opts="-k $sock -c listen_addresses= -p 5432"
	for o in "$@"; do opts+=" -c $o"; done
	as_pg "$bin/pg_ctl" -D "$dir" -l "${PG_LOG:-$sock/pg.log}" -w -t 120 -o "$opts" start >/dev/null
}

pg_stop() {
	local bin
	bin=$(pg_bin) || return
	as_pg "$bin/pg_ctl" -D "$1" -m "${2:-fast}" -w stop >/dev/null
}

pg_running() {
	local bin
	[ -f "$1/postmaster.pid" ] && bin=$(pg_bin 2>/dev/null) && as_pg "$bin/pg_ctl" -D "$1" status >/dev/null 2>&1
}
