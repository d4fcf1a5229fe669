package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// runBenchOnHosts is 'bench SUITE --on A --on B': every probe of the plan
// runs on each host in turn (probe by probe, so drift falls on all hosts
// alike), the runs are stored here attributed to each host, and the hosts
// are compared side by side as 'perflab compare' would.
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
	var st *store.Store
	if !flagBool(cmd, "no-store") {
		if st, err = openStore(flagString(cmd, "db")); err != nil {
			return err
		}
		defer st.Close()
	}
	ctx := cmd.Context()
	hosts, err := openHosts(ctx, e, rf)
	defer func() {
		for _, h := range hosts {
			h.Close()
		}
	}()
	if err != nil {
		return err
	}
	base := benchBaseArgs(cmd, e.args)
	sides := make([]compare.Side, len(hosts))
	for i, h := range hosts {
		sides[i] = compare.Side{Name: h.Name, Snapshots: map[string]*snapshot.Snapshot{}}
	}
	step, failed := 0, 0
	for _, it := range plan.Items {
		for i, h := range hosts {
			step++
			fmt.Fprintf(e.stderr, "[%d/%d] %s on %s\n", step, len(plan.Items)*len(hosts), it.Probe.Name(), h.Name)
			runs, snaps, err := benchItemOn(ctx, e, h, it.Probe.Name(), itemArgs(cmd, it.Params, it.Budget.String(), it.MaxRuns), base)
			if err != nil {
				if ctx.Err() != nil {
					return clierr.Runtimef("runs finished so far are stored", "interrupted")
				}
				return remoteErr(err)
			}
			if len(runs) == 0 {
				failed++
			}
			if err := addHostRuns(ctx, st, &sides[i], plan.Suite, runs, snaps); err != nil {
				return err
			}
		}
	}
	return renderHosts(e, &out, sides, failed)
}

// addHostRuns stores one host's runs of a step (unless st is nil) and
// adds them to its side of the comparison.
func addHostRuns(ctx context.Context, st *store.Store, side *compare.Side, suite string, runs []*run.Run, snaps map[string]*snapshot.Snapshot) error {
	for _, r := range runs {
		r.Suite = suite
		if st != nil {
			if err := st.SaveRun(context.WithoutCancel(ctx), r, snaps[r.SnapshotID]); err != nil {
				return clierr.Runtimef("", "storing run %s from %s: %v", r.ID, side.Name, err)
			}
		}
		side.Runs = append(side.Runs, r)
	}
	for id, s := range snaps {
		side.Snapshots[id] = s
	}
	return nil
}

// openHosts opens a session to every --on host; the caller closes the
// ones returned, also with an error.
func openHosts(ctx context.Context, e *env, rf *remoteFlags) ([]*remote.Session, error) {
	hosts := make([]*remote.Session, 0, len(rf.on))
	for _, t := range rf.on {
		h, err := remote.OpenSession(ctx, t, remote.ExecOptions{
			Conn: remote.Options{AcceptNewHostKey: rf.acceptNew}, Binary: remote.BinaryOptions{Path: rf.binary}, Stderr: e.stderr})
		if err != nil {
			return hosts, remoteErr(err)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
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

// benchItemOn runs one probe on one host and returns its runs.
func benchItemOn(ctx context.Context, e *env, h *remote.Session, probe string, item, base []string) ([]*run.Run, map[string]*snapshot.Snapshot, error) {
	args := append(append(append([]string{"bench", "probe:" + probe}, item...), base...), "--format", "json")
	res, err := h.Run(ctx, args, true, io.Discard, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	if len(res.Export) == 0 {
		fmt.Fprintf(e.stderr, "note: %s on %s stored no run (exit %d)\n", probe, h.Name, res.Code)
		return nil, nil, nil
	}
	ex, err := remote.Attribute(res.Export, h.Name)
	if err != nil {
		return nil, nil, err
	}
	return ex.Runs, ex.Snapshots, nil
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
