"""The list bench/audit-floor replays: the file-system operations of
`perflab audit` that `perflab --version` does not do (so the Go runtime's
and the package initialisers' own reads are left out), from two
`strace -f -y -s 4096 -e trace=openat,newfstatat,readlinkat` logs.

    python3 capture.py AUDIT.strace VERSION.strace > LIST

Prints "op<TAB>path" lines (see main.go) and, on stderr, a summary.
"""
import collections, os, re, sys

CALL = re.compile(r'^(\d+)\s+(openat|newfstatat|readlinkat)\((AT_FDCWD|-?\d+)(?:<([^>]*)>)?, "((?:[^"\\]|\\.)*)"(?:\.\.\.)?, ([^)]*)')


def ops(log):
    out, leader = [], None
    with open(log) as f:
        for line in f:
            if 'resumed>' in line:
                continue
            m = CALL.match(line)
            if not m:
                continue
            pid, call, dirfd, dirname, path, rest = m.groups()
            leader = leader or pid
            if path == "":
                continue  # fstat of an open descriptor, part of the operation before it
            if not path.startswith("/"):
                if dirfd == "AT_FDCWD" or not dirname:
                    continue  # relative to the working directory: not a host file
                path = os.path.join(dirname, path)
            path = re.sub(r'^/proc/%s(?=/|$)' % leader, '/proc/self', path)
            if call == "newfstatat":
                out.append(("stat", path))
            elif call == "readlinkat":
                if not path.startswith("/proc/self/fd/"):  # that one is part of an O_PATH resolution
                    out.append(("readlink", path))
            elif "O_PATH" in rest:
                out.append(("path", path))
            elif "O_DIRECTORY" in rest or os.path.isdir(path):
                out.append(("dir", path))
            else:
                out.append(("read", path))
    return out


audit, version = ops(sys.argv[1]), ops(sys.argv[2])
left = collections.Counter(version)
kept = []
for o in audit:
    if left[o] > 0:
        left[o] -= 1
    else:
        kept.append(o)
for kind, path in kept:
    print(f"{kind}\t{path}")
c = collections.Counter(k for k, _ in kept)
print(f"audit-floor list: {len(kept)} operations of {len(audit)} in `perflab audit` "
      f"({len(audit) - len(kept)} also in --version): " + ", ".join(f"{k} {n}" for k, n in sorted(c.items())), file=sys.stderr)
