package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/remote"
	"github.com/spf13/cobra"
)

// remoteCommands take --on TARGET: they run there, and store and report here.
var remoteCommands = map[string]bool{"snapshot": true, "audit": true, "bench": true, "check": true, "profile": true, "tune": true}

type remoteFlags struct {
	on          []string
	acceptNew   bool
	binary      string
	inventory   string
	forks       int
	hostTimeout time.Duration
	noCache     bool
}

// addRemote gives the remote-capable commands --on (one hook for all:
// the same command line, minus the local-only flags, runs on the target
// under perflab's agent) and adds the hidden commands the remote side runs.
func addRemote(root *cobra.Command, e *env) {
	for _, c := range root.Commands() {
		if remoteCommands[c.Name()] {
			rf := &remoteFlags{}
			pf := c.PersistentFlags()
			pf.StringArrayVar(&rf.on, "on", nil, "run on this host over SSH: [user@]host[:port] or a Host of ~/.ssh/config (with --inventory: a host pattern); store and report here")
			pf.BoolVar(&rf.acceptNew, "accept-new-host-key", false, "with --on: trust and record the key of a host not in ~/.ssh/known_hosts (a changed key is still refused)")
			pf.StringVar(&rf.binary, "remote-binary", "", "with --on: the perflab build to copy when the remote architecture differs (default perflab-linux-ARCH next to this one)")
			pf.StringVar(&rf.inventory, "inventory", "", "Ansible inventory (INI or YAML): --on is then a host pattern (a host, a group, all, 'group:!other') run on every selected host")
			pf.IntVar(&rf.forks, "forks", 5, "with --inventory: hosts run at once (SSH connections open at once)")
			pf.DurationVar(&rf.hostTimeout, "host-timeout", 30*time.Minute, "with --inventory: give up on a host after this long (connection, run and cleanup)")
			pf.BoolVar(&rf.noCache, "no-binary-cache", false, "with --inventory: copy perflab to each host for the run only, instead of keeping it in ~/.cache/perflab/bin there (named by its SHA-256) for the next run")
			if c.Flags().Lookup("db") == nil {
				c.Flags().String("db", "", "with --inventory: store each host's snapshot in this run database (default $XDG_DATA_HOME/perflab/perflab.db; postgres://… for a shared store)")
			}
			wrapRemote(c, e, rf)
		}
		if c.Name() == "bench" {
			c.Flags().String("peer", "", "run the server side of net.tcp, net.udp, net.ping, qperf, iperf3, sockperf, wrk.nginx and redis-benchmark on this host over SSH, the client here")
			c.Flags().String("peer-cpus", "", "with --peer: pin the peer's server threads to these CPUs (there)")
		}
	}
	root.AddCommand(newRemoteAgentCmd(e), newPeerServerCmd(e))
}

// attachPeer starts the peer servers for bench --peer and points the
// planned probes there (remote.AttachPeers). The returned function stops
// them and stores the peer's snapshot with the runs (unless --no-store).
func attachPeer(cmd *cobra.Command, e *env, plan *bench.Plan) (func(), error) {
	target, cpus := flagString(cmd, "peer"), flagString(cmd, "peer-cpus")
	if target == "" {
		if cpus != "" {
			return nil, clierr.Usagef("e.g. --peer db2 --peer-cpus 1", "--peer-cpus needs --peer")
		}
		return func() {}, nil
	}
	ps, err := remote.AttachPeers(cmd.Context(), target, cpus, plan, remote.ExecOptions{
		Conn:   remote.Options{AcceptNewHostKey: flagBool(cmd, "accept-new-host-key")},
		Binary: remote.BinaryOptions{Path: flagString(cmd, "remote-binary")},
		Stderr: e.stderr,
	})
	if errors.Is(err, remote.ErrNoServerSide) {
		return nil, clierr.Usagef("--peer applies to net.tcp, net.udp, net.ping, qperf, iperf3, sockperf, wrk.nginx and redis-benchmark", "--peer: none of the selected probes has a server side")
	}
	if err != nil {
		return nil, remoteErr(err)
	}
	return func() {
		ps.Close()
		if ps.Snapshot == nil || flagBool(cmd, "no-store") {
			return
		}
		if st, err := openStore(flagString(cmd, "db")); err == nil {
			if err := st.SaveSnapshot(context.WithoutCancel(cmd.Context()), ps.Snapshot); err != nil {
				fmt.Fprintf(e.stderr, "note: peer snapshot not stored: %v\n", err)
			}
			st.Close()
		}
	}, nil
}

// newPeerServerCmd serves the server side of the network probes for a
// client on another host (hidden; started by bench --peer).
func newPeerServerCmd(e *env) *cobra.Command {
	var (
		bind, cpus, tool string
		params           []string
	)
	cmd := &cobra.Command{
		Use:    remote.PeerServerName,
		Short:  "Serve net.tcp, net.udp and net.ping for a client on another host (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := remote.PeerOptions{Bind: bind, CPU: -1, CPUs: cpus, Tool: tool, Params: map[string]string{}}
			for _, kv := range params {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return clierr.Usagef("", "bad --param %q", kv)
				}
				o.Params[k] = v
			}
			if cpus != "" {
				list, err := cpuset.ParseList(cpus)
				if err != nil || len(list) == 0 {
					return clierr.Usagef("e.g. --peer-cpus 1", "bad --peer-cpus %q", cpus)
				}
				if err := bench.CheckCPUs(list); err != nil {
					return clierr.Usagef("", "--peer-cpus on the peer: %v", err)
				}
				o.CPU = list[0]
			}
			if err := remote.ServePeer(cmd.Context(), o, e.stdout); err != nil {
				return clierr.Runtimef("", "peer server: %v", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&bind, "bind", "", "IPv4 address to listen on (default: the one the SSH client reached)")
	cmd.Flags().StringVar(&cpus, "cpus", "", "pin the server threads to the first of these CPUs (a tool's server to all)")
	cmd.Flags().StringVar(&tool, "tool", "", "run this tool adapter's server instead of perflab's own")
	cmd.Flags().StringArrayVar(&params, "param", nil, "the tool's parameters key=value")
	return cmd
}

func wrapRemote(c *cobra.Command, e *env, rf *remoteFlags) {
	for _, sub := range c.Commands() {
		wrapRemote(sub, e, rf)
	}
	if c.RunE == nil {
		return
	}
	local := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(rf.on) == 0 && rf.inventory != "" {
			return clierr.Usagef("e.g. --inventory "+rf.inventory+" --on all", "--inventory needs --on PATTERN (a host, a group, all, 'group:!other')")
		}
		if len(rf.on) == 0 {
			return local(cmd, args)
		}
		return runOn(cmd, e, rf)
	}
}

// localOnlyValue and localOnlyBool are stripped from the command line
// sent to the remote host.
var (
	localOnlyValue = []string{"--on", "--remote-binary", "--db", "-o", "--output", "--inventory", "--forks", "--host-timeout"}
	localOnlyBool  = []string{"--accept-new-host-key", "--no-binary-cache"}
)

func runOn(cmd *cobra.Command, e *env, rf *remoteFlags) error {
	if rf.inventory != "" {
		return runFleet(cmd, e, rf)
	}
	if len(rf.on) > 1 {
		if cmd.Name() != "bench" {
			return clierr.Usagef("give one --on, or use 'perflab bench SUITE --on A --on B' to compare two hosts", "%s takes one --on", cmd.CommandPath())
		}
		return runBenchOnHosts(cmd, e, rf)
	}
	target := rf.on[0]
	out := outputFlags{output: flagString(cmd, "output")}
	w, commit, err := out.open(e.stdout)
	if err != nil {
		return err
	}
	export := (cmd.Name() == "bench" || cmd.Name() == "check") && !flagBool(cmd, "no-store")
	res, err := remote.Exec(cmd.Context(), target, remote.ExecOptions{
		Conn:   remote.Options{AcceptNewHostKey: rf.acceptNew},
		Binary: remote.BinaryOptions{Path: rf.binary},
		Args:   remoteFormat(cmd, remote.ForwardArgs(e.args, localOnlyValue, localOnlyBool), out.output),
		Export: export, Stdout: w, Stderr: e.stderr,
	})
	if res != nil && len(res.Export) > 0 {
		if serr := storeRemoteRuns(cmd.Context(), e, flagString(cmd, "db"), remote.Name(target), res.Export); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return remoteErr(err)
	}
	if err := commit(); err != nil {
		return clierr.Runtimef("check that the directory is writable", "%v", err)
	}
	if res.Code != 0 {
		return &clierr.Error{Code: res.Code} // the remote perflab printed why
	}
	return nil
}

// remoteFormat forwards the format -o implies: -o x.json without --format
// writes JSON locally, so it must there too (the remote sees no -o).
func remoteFormat(cmd *cobra.Command, args []string, output string) []string {
	if f := cmd.Flags().Lookup("format"); f != nil && !f.Changed && strings.EqualFold(filepath.Ext(output), ".json") {
		return append(args, "--format", "json")
	}
	return args
}

// storeRemoteRuns stores the runs a remote command brought back,
// attributed to the target's name.
func storeRemoteRuns(ctx context.Context, e *env, db, name string, export []byte) error {
	ex, err := remote.Attribute(export, name)
	if err != nil {
		return clierr.Runtimef("", "%v", err)
	}
	st, err := openStore(db)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range ex.Runs {
		if err := st.SaveRun(context.WithoutCancel(ctx), r, ex.Snapshots[r.SnapshotID]); err != nil {
			return clierr.Runtimef("the remote measurements were not stored", "storing run %s from %s: %v", r.ID, name, err)
		}
	}
	fmt.Fprintf(e.stderr, "stored %d run(s) from %s in %s\n", len(ex.Runs), name, st.Path)
	return nil
}

// remoteErr maps a remote failure to its exit code: a target that cannot
// be parsed is usage (2), everything else on the way is runtime (3).
func remoteErr(err error) error {
	if err == context.Canceled {
		return clierr.Runtimef("the remote run was stopped and its files removed", "interrupted")
	}
	if remote.KindOf(err) == remote.KindBadTarget {
		return clierr.Wrap(clierr.Usage, err, "")
	}
	return clierr.Wrap(clierr.Runtime, err, "")
}

func flagString(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

func flagBool(cmd *cobra.Command, name string) bool { return flagString(cmd, name) == "true" }

// newRemoteAgentCmd is what --on runs on the remote host (hidden).
func newRemoteAgentCmd(e *env) *cobra.Command {
	var o remote.AgentOptions
	cmd := &cobra.Command{
		Use:    remote.AgentName + " [flags] -- PERFLAB-ARGS...",
		Short:  "Run perflab for a remote caller under a watchdog (internal)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.Hold {
				return clierr.Usagef("", "nothing to run")
			}
			o.Args = args
			if code := remote.RunAgent(e.stdin, e.stdout, o); code != 0 {
				return &clierr.Error{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "private directory (removed at the end)")
	cmd.Flags().BoolVar(&o.Export, "export", false, "send the stored runs back")
	cmd.Flags().DurationVar(&o.Heartbeat, "heartbeat", 20*time.Second, "stop when the caller is silent this long")
	cmd.Flags().BoolVar(&o.Hold, "hold", false, "run nothing: keep --dir for a session of runs")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "leave --dir to its holder")
	cmd.Flags().BoolVar(&o.Snapshot, "snapshot", false, "send the host's snapshot back after the command")
	return cmd
}
