package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

func newSnapshotCmd(e *env) *cobra.Command {
	var (
		out     outputFlags
		root    string
		pid     int
		ref     string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Record the host's performance-relevant facts",
		Long: `snapshot reads the host's CPU, power, memory, kernel, sysctl, network
(NICs, queues, IRQ affinity, RPS/XPS, conntrack), block, mount, cgroup,
service and tool facts through /proc and /sys. It spawns no process and
changes nothing. A fact the host lacks is recorded as unavailable with the
reason. The JSON form feeds 'perflab audit --snapshot' on any machine.`,
		Example: `  perflab snapshot                          # one-screen summary of this host
  perflab snapshot --verbose                # … and why each missing fact is missing
  perflab snapshot --format json -o host.json
  perflab snapshot --pid $(pidof mysqld)    # cgroup, limits and allocator of a process
  perflab snapshot --root /mnt/captured     # a host tree copied elsewhere
  perflab snapshot --container web1         # a container's view: its net sysctls, cgroup, what the host has`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			s, err := collectSnapshot(root, ref, pid)
			if err != nil {
				return err
			}
			return writeSnapshot(e, &out, s, verbose)
		},
	}
	out.register(cmd, "text", "text", "json")
	cmd.Flags().StringVar(&root, "root", "/", "host root to read (a copied tree of proc/, sys/, etc/)")
	cmd.Flags().IntVar(&pid, "pid", 0, "also record this process (cgroup, limits, allocator, mounts from its view)")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list every unavailable fact with the reason")
	registerContainer(cmd, &ref)
	return cmd
}

// collectSnapshot takes the snapshot of --root, checking --pid first.
func collectSnapshot(root, ref string, pid int) (*snapshot.Snapshot, error) {
	fs, err := hostfs.New(root)
	if err != nil {
		if errors.Is(err, hostfs.ErrNotLinuxRoot) || errors.Is(err, os.ErrNotExist) {
			return nil, clierr.Usagef("point --root at a directory holding proc/ and sys/, or omit it for this host", "--root %s is not a Linux root tree", root)
		}
		return nil, clierr.Usagef("check the --root path", "--root %s: %v", root, err)
	}
	if pid < 0 {
		return nil, clierr.Usagef("give the PID of a running process", "--pid %d is not a process ID", pid)
	}
	if pid > 0 && !fs.Exists("/proc/"+strconv.Itoa(pid)) {
		return nil, clierr.Usagef("check the PID with 'ps' (under --root, its /proc/<pid> must exist)", "no process %d under %s", pid, fs.Path("/proc"))
	}
	if t, err := openTarget(fs, ref, pid); err != nil || t != nil {
		if err != nil {
			return nil, err
		}
		s, err := t.Snapshot(snapshot.Options{})
		return s, targetErr(err)
	}
	s, err := snapshot.Collect(fs, snapshot.Options{PID: pid})
	if err != nil {
		return nil, clierr.Runtimef("", "snapshot of %s: %v", fs.Root(), err)
	}
	remote.KeepSnapshot(s) // under a fleet run's agent: the snapshot to store
	return s, nil
}

// writeSnapshot writes the snapshot as JSON or the text summary.
func writeSnapshot(e *env, out *outputFlags, s *snapshot.Snapshot, verbose bool) error {
	w, commit, err := out.open(e.stdout)
	if err != nil {
		return err
	}
	style := termfmt.Style{On: out.format == report.FormatText && out.output == "" && termfmt.ColorEnabled(e.stdout)}
	if err := report.Write(w, &report.SnapshotView{Snapshot: s, Verbose: verbose}, out.format, report.Options{Style: style}); err != nil {
		return clierr.Runtimef("", "write snapshot: %v", err)
	}
	if err := commit(); err != nil {
		return clierr.Runtimef("check that the directory is writable", "%v", err)
	}
	if out.output != "" && out.output != "-" {
		fmt.Fprintf(e.stderr, "snapshot %s written to %s (%d facts unavailable)\n", s.ID, out.output, len(s.Unavailable))
	}
	return nil
}
