package cli

import (
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/fleetrun"
	"github.com/perflab/perflab/internal/remote"
	"github.com/spf13/cobra"
)

// runBenchOnHosts is 'bench SUITE --on A --on B': fleetrun.BenchHosts
// runs every probe of the plan on each host in turn and stores the runs
// attributed to each host; the hosts are then compared side by side as
// 'perflab compare' would.
func runBenchOnHosts(cmd *cobra.Command, e *env, rf *remoteFlags) error {
	params, _ := cmd.Flags().GetStringArray("param")
	plan, err := resolvePlan(e, cmd.Flags().Args(), params)
	if err != nil {
		return err
	}
	out := outputFlags{format: flagString(cmd, "format"), output: flagString(cmd, "output"), allowed: []string{"text", "json", "md"}}
	if err := out.validate(); err != nil {
		return err
	}
	o := fleetrun.BenchOptions{
		Targets: rf.on, Conn: remote.Options{AcceptNewHostKey: rf.acceptNew}, Binary: remote.BinaryOptions{Path: rf.binary},
		Base: benchBaseArgs(cmd, e.args), Suite: plan.Suite, Progress: e.stderr,
	}
	for _, it := range plan.Items {
		o.Steps = append(o.Steps, fleetrun.BenchStep{Probe: it.Probe.Name(), Args: itemArgs(cmd, it.Params, it.Budget.String(), it.MaxRuns)})
	}
	if !flagBool(cmd, "no-store") {
		st, err := openStore(flagString(cmd, "db"))
		if err != nil {
			return err
		}
		defer st.Close()
		o.Store = st
	}
	res, err := fleetrun.BenchHosts(cmd.Context(), o)
	var se *fleetrun.StoreError
	switch {
	case err != nil && cmd.Context().Err() != nil:
		return clierr.Runtimef("runs finished so far are stored", "interrupted")
	case errors.As(err, &se):
		return clierr.Runtimef("", "%v", se)
	case err != nil:
		return remoteErr(err)
	}
	return renderHosts(e, &out, res.Sides, res.Failed)
}

// benchBaseArgs is the command line for each remote step: the user's bench
// flags without the names, the local-only flags and those each step sets
// itself.
func benchBaseArgs(cmd *cobra.Command, args []string) []string {
	fwd := remote.ForwardArgs(args, append(localOnlyValue, "--param", "--format", "--budget", "--max-runs"), localOnlyBool)
	names := map[string]int{}
	for _, a := range cmd.Flags().Args() {
		names[a]++
	}
	var base []string
	for i, a := range fwd {
		if i == 0 && a == "bench" {
			continue
		}
		if names[a] > 0 {
			names[a]--
			continue
		}
		base = append(base, a)
	}
	return base
}

// itemArgs are one planned probe's parameters and limits as flags.
func itemArgs(cmd *cobra.Command, params map[string]string, budget string, maxRuns int) []string {
	var a []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		a = append(a, "--param", k+"="+params[k])
	}
	if cmd.Flags().Changed("budget") {
		budget = flagString(cmd, "budget")
	}
	if budget != "0s" {
		a = append(a, "--budget", budget)
	}
	if cmd.Flags().Changed("max-runs") {
		a = append(a, "--max-runs", flagString(cmd, "max-runs"))
	} else if maxRuns > 0 {
		a = append(a, "--max-runs", strconv.Itoa(maxRuns))
	}
	return a
}

// renderHosts prints the side-by-side comparison of the hosts.
func renderHosts(e *env, out *outputFlags, sides []compare.Side, failed int) error {
	for _, s := range sides {
		if len(s.Runs) == 0 {
			return clierr.Runtimef("see the notes above", "no run on %s completed", s.Name)
		}
	}
	c, err := compare.Compare(sides, compare.Options{})
	if err != nil {
		return clierr.Runtimef("", "comparing the hosts: %v", err)
	}
	if err := renderComparison(e, out, c); err != nil {
		return err
	}
	if failed > 0 {
		return clierr.Runtimef("the other results are stored and compared above", "%d probe run(s) failed", failed)
	}
	return nil
}
