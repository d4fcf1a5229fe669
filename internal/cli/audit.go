package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/spf13/cobra"
)

type auditFlags struct {
	root     string
	snapFile string
	workload string
	failOn   string
	pid      int
	ref      string
	trusted  bool
	verbose  bool
	out      outputFlags
}

func newAuditCmd(e *env) *cobra.Command {
	var f auditFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check this host (or a snapshot) against the rule catalogue for a workload",
		Long: `audit evaluates every rule of the catalogue ('perflab rules') on a snapshot of
this host, of a --root tree, or of a --snapshot file taken on another host, for
a workload: a built-in (general, latency, throughput, database, kv, web, jvm,
container-host), an application that picks its class (redis → kv, nginx → web,
mysql → database …; 'perflab rules --workloads' lists them) or a YAML profile
file. Each failing finding says what was
observed, what the workload expects, why it matters and the command that fixes
it (and the one that reverts it). The default audit spawns no process.

Exit codes: 0 nothing fails at or above --fail-on (default none: never fail),
1 something does, 2 bad flags or input, 3 runtime error.`,
		Example: `  perflab audit                                   # general workload, this host
  perflab audit --workload web --fail-on high     # CI/cron: exit 1 on high or critical
  perflab audit --snapshot host.json --format md  # a ticket-ready table for a host captured elsewhere
  perflab audit --workload kv --trusted -v        # single-tenant redis host, list every rule
  perflab audit --workload nginx                  # an application: judged as its class, web
  perflab audit --container web1 --workload web   # a container: its net sysctls and cgroup, where each lives
  perflab audit --format prom -o /var/lib/node_exporter/textfile/perflab.prom`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAudit(e, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.root, "root", "", "host root filesystem to audit instead of / (holding proc/ and sys/)")
	fl.StringVar(&f.snapFile, "snapshot", "", "audit a snapshot FILE written by 'perflab snapshot' instead of this host")
	fl.StringVarP(&f.workload, "workload", "w", "general", audit.WorkloadFlagHelp())
	fl.StringVar(&f.failOn, "fail-on", "none", "exit 1 when a finding fails at or above this severity: none|info|low|medium|high|critical")
	fl.IntVar(&f.pid, "pid", 0, "also collect facts of process PID (cgroup, limits, allocator, THP; in a container: its network namespace too)")
	registerContainer(cmd, &f.ref)
	fl.BoolVar(&f.trusted, "trusted", false, "the host is single-tenant and runs only trusted code (judge mitigations and audit as performance costs)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "also list passing and not-applicable rules")
	f.out.register(cmd, "text", "text", "json", "md", "prom")
	_ = cmd.RegisterFlagCompletionFunc("workload", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return audit.WorkloadNames(), cobra.ShellCompDirectiveDefault
	})
	_ = cmd.RegisterFlagCompletionFunc("fail-on", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"none", "info", "low", "medium", "high", "critical"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// parseFailOn returns the threshold, or ok=false for none.
func parseFailOn(s string) (audit.Severity, bool, error) {
	if strings.EqualFold(s, "none") {
		return 0, false, nil
	}
	sev, err := audit.ParseSeverity(s)
	if err != nil {
		return 0, false, clierr.Usagef("use none, info, low, medium, high or critical", "--fail-on: unknown severity %q", s)
	}
	return sev, true, nil
}

func runAudit(e *env, f *auditFlags) error {
	defer oneShotGC()()
	if err := f.out.validate(); err != nil {
		return err
	}
	threshold, failOn, err := parseFailOn(f.failOn)
	if err != nil {
		return err
	}
	if f.snapFile != "" && f.root != "" {
		return clierr.Usagef("use one of them", "--snapshot and --root both name the host to audit")
	}
	if f.snapFile != "" && (f.pid != 0 || f.ref != "") {
		return clierr.Usagef("take the snapshot with 'perflab snapshot --pid' on that host", "--pid needs a live host, not --snapshot")
	}
	if f.pid < 0 {
		return clierr.Usagef("give a process id from ps", "--pid %d is not a process id", f.pid)
	}
	w, err := resolveWorkload(f.workload)
	if err != nil {
		return err
	}
	if f.trusted {
		w.Trusted = true
	}
	s, source, err := loadAuditSnapshot(f, audit.Sysctls(w))
	if err != nil {
		return err
	}
	findings := audit.Run(s, w)
	rep := audit.NewReport(s, w, findings, Version, source)

	err = writeResult(&f.out, e.stdout, &report.AuditView{Report: rep, Snapshot: s, Version: Version, Verbose: f.verbose})
	if err != nil {
		return clierr.Wrap(clierr.Runtime, err, "")
	}
	if failOn && audit.FailsAt(findings, threshold) {
		worst, _ := audit.Worst(findings)
		return clierr.CheckFailed(fmt.Sprintf("audit: findings fail at %s (--fail-on %s)", worst, threshold))
	}
	return nil
}

// loadAuditSnapshot reads --snapshot or collects --root (default /),
// reading only the sysctls the audit reads.
func loadAuditSnapshot(f *auditFlags, sysctls []string) (*snapshot.Snapshot, string, error) {
	if f.snapFile != "" {
		s, err := snapshot.ReadFile(f.snapFile)
		if err != nil {
			hint := "write one with 'perflab snapshot -o FILE'"
			switch {
			case errors.Is(err, snapshot.ErrNewerSchema):
				hint = "upgrade perflab on this machine to read it"
			case errors.Is(err, fs.ErrNotExist):
				hint = "check the path"
			}
			return nil, "", clierr.Usagef(hint, "cannot use --snapshot: %v", err)
		}
		return s, f.snapFile, nil
	}
	root := f.root
	if root == "" {
		root = "/"
	}
	if f.pid > 0 {
		fs, err := openRoot(root)
		if err != nil {
			return nil, "", err
		}
		if !fs.Exists(fmt.Sprintf("/proc/%d", f.pid)) {
			return nil, "", clierr.Usagef("give a running process id", "--pid %d: no such process under %s", f.pid, root)
		}
	}
	// The tools collector only when an agent keeps this snapshot: the
	// audit judges no tool (snapshot.Options.NoTools).
	s, _, t, err := collectTarget(root, f.ref, f.pid, snapshot.Options{Sysctls: sysctls, NoTools: !remote.KeepsSnapshot()})
	if err != nil {
		return nil, "", err
	}
	source := "live"
	remote.KeepSnapshot(s) // under a fleet run's agent: the snapshot audited is the one stored
	if t != nil {
		source = "container " + t.C.Label()
	}
	if root != "/" {
		source = root
	}
	return s, source, nil
}
