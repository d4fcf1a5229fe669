// Command audit-lean measures what a structural change would give, without
// making it: `perflab audit --format json` on the live host as the binary
// does it — the audit's sysctls only, no tools, the collector off, the
// same snapshot, rules and JSON writer — linked WITHOUT the libraries of
// perflab's other commands (client_golang and protobuf, SQLite, pgx,
// x/crypto/ssh, cilium/ebpf, cobra: see bench/deps-floor.sh). It is never
// shipped; bench/startup.sh times it beside the real command, so the
// difference is what those libraries' start-up costs the audit, and its
// median is the figure a separately linked audit could reach here.
//
// Its output equals perflab's but for the facts that change between two
// runs (times, counters) and the version (bench/startup.sh compares
// the findings of both).
//
//	audit-lean [-workload general]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

func main() {
	workload := flag.String("workload", "general", "the workload whose rules are run, as perflab audit --workload")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: audit-lean [-workload NAME] (a benchmark program; see bench/startup.sh)")
		os.Exit(2)
	}
	// As perflab audit (internal/cli/gc.go): no collection in one audit.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" && debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(256 << 20)
		debug.SetGCPercent(-1)
	}
	w, err := audit.ResolveWorkload(*workload)
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit-lean:", err)
		os.Exit(2)
	}
	fs, err := hostfs.New("/")
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit-lean:", err)
		os.Exit(3)
	}
	s, err := snapshot.Collect(fs, snapshot.Options{Sysctls: audit.Sysctls(w), NoTools: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "audit-lean:", err)
		os.Exit(3)
	}
	findings := audit.Run(s, w)
	if err := audit.NewReport(s, w, findings, "audit-lean", "live").WriteJSON(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "audit-lean:", err)
		os.Exit(3)
	}
}
