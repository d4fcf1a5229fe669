package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fleetrun"
	"github.com/perflab/perflab/internal/inventory"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/report"
	"github.com/spf13/cobra"
)

// runFleet runs the command on every inventory host --on selects
// (internal/fleetrun), stores what they send back and prints each host's
// output and the outcome table.
func runFleet(cmd *cobra.Command, e *env, rf *remoteFlags) error {
	if rf.forks < 1 {
		return clierr.Usagef("e.g. --forks 5", "--forks %d: want at least 1", rf.forks)
	}
	hosts, err := fleetHosts(rf)
	if err != nil {
		return err
	}
	o := fleetrun.Options{
		Forks: rf.forks, HostTimeout: rf.hostTimeout,
		Conn:     remote.Options{AcceptNewHostKey: rf.acceptNew},
		Binary:   remote.BinaryOptions{Path: rf.binary, Cache: !rf.noCache},
		Args:     remote.ForwardArgs(e.args, localOnlyValue, localOnlyBool),
		Export:   cmd.Name() == "bench" || cmd.Name() == "check",
		Snapshot: cmd.Name() == "audit" || cmd.Name() == "snapshot",
		Progress: e.stderr,
	}
	if !flagBool(cmd, "no-store") {
		st, err := openStore(flagString(cmd, "db"))
		if err != nil {
			return err
		}
		defer st.Close()
		o.Store = st
	}
	return writeFleet(cmd, e, func(onHost func(*fleetrun.Report, fleetrun.Outcome) error) *fleetrun.Report {
		o.OnHost = onHost
		return fleetrun.Run(cmd.Context(), hosts, o)
	})
}

// fleetHosts loads the inventory and resolves the --on patterns.
func fleetHosts(rf *remoteFlags) ([]fleetrun.Host, error) {
	inv, err := inventory.Load(rf.inventory)
	if err != nil {
		return nil, clierr.Wrap(clierr.Usage, err, "check the inventory file")
	}
	sel, err := inv.Resolve(strings.Join(rf.on, ":"))
	if err != nil {
		if errors.Is(err, inventory.ErrPattern) {
			return nil, clierr.Wrap(clierr.Usage, err, "groups: "+strings.Join(inv.GroupNames(), ", "))
		}
		return nil, clierr.Wrap(clierr.Usage, err, "")
	}
	return fleetrun.FromInventory(sel), nil
}

// writeFleet streams the fleet run's output: each host's result as the
// host finishes, then the outcome table (report.FleetRunWriter).
func writeFleet(cmd *cobra.Command, e *env, run func(func(*fleetrun.Report, fleetrun.Outcome) error) *fleetrun.Report) error {
	out := outputFlags{output: flagString(cmd, "output")}
	w, commit, err := out.open(e.stdout)
	if err != nil {
		return err
	}
	fw, err := report.NewFleetRunWriter(w, flagString(cmd, "format"))
	if err != nil {
		return clierr.Usagef("use --format text or json with --inventory", "%v", err)
	}
	rep := run(fw.Host)
	if err := rep.WriteErr; err != nil {
		return clierr.Runtimef("", "writing the fleet run's output: %v", err)
	}
	if err := fw.Close(rep); err != nil {
		return clierr.Runtimef("", "writing the fleet run's output: %v", err)
	}
	if err := commit(); err != nil {
		return clierr.Runtimef("check that the directory is writable", "%v", err)
	}
	return fleetExit(rep)
}

// fleetExit is 3 when a host did not run the command, 1 when the command
// itself exited 1 on a host (a check or --fail-on failed), else 0.
func fleetExit(rep *fleetrun.Report) error {
	if n := rep.Failed(); n > 0 {
		return clierr.Runtimef("see the outcome table", "%d of %d host(s) failed", n, len(rep.Hosts))
	}
	n := 0
	for _, h := range rep.Hosts {
		if h.ExitCode == 1 {
			n++
		}
	}
	if n > 0 {
		return clierr.CheckFailed(fmt.Sprintf("%d of %d host(s) failed the check", n, len(rep.Hosts)))
	}
	return nil
}
