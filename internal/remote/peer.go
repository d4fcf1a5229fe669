package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/probe/tools"
	"github.com/perflab/perflab/internal/snapshot"
)

// PeerServerName is the hidden subcommand that serves the server side of
// the network probes on a peer host.
const PeerServerName = "peer-server"

// peerReady is the peer server's one-line announcement.
type peerReady struct {
	builtin.PeerInfo
	Port     int             `json:"port,omitempty"` // a tool's server port
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// PeerOptions configure a peer server.
type PeerOptions struct {
	Bind   string            // IPv4 address to listen on; "" = the one the SSH client reached
	CPU    int               // pin the builtin servers to this CPU; -1 = unpinned
	CPUs   string            // a tool server's CPUs (its server_cpus); "" = unpinned
	Tool   string            // a tool adapter whose server to run instead of the builtin servers
	Params map[string]string // the tool's parameters
}

// ServePeer runs on the peer host: it listens on bind (default: the
// address the SSH client reached this host on, from SSH_CONNECTION — the
// peer's address on the path to the client) on ephemeral ports, prints
// one line with the address, the ports and this host's snapshot, and
// serves until ctx ends.
func ServePeer(ctx context.Context, o PeerOptions, w io.Writer) error {
	bind := o.Bind
	if bind == "" {
		f := strings.Fields(os.Getenv("SSH_CONNECTION"))
		if len(f) != 4 {
			return fmt.Errorf("no --bind and no SSH_CONNECTION to find the address the client reaches this host on")
		}
		bind = f[2]
	}
	if a, err := netip.ParseAddr(bind); err == nil && a.Is4In6() {
		bind = a.Unmap().String()
	}
	ready := peerReady{PeerInfo: builtin.PeerInfo{Addr: bind}}
	if o.Tool != "" {
		stop, port, err := serveTool(ctx, bind, o)
		if err != nil {
			return err
		}
		defer stop()
		ready.Port = port
	} else {
		srv, err := builtin.StartPeerServer(bind, o.CPU)
		if err != nil {
			return err
		}
		defer srv.Close()
		ready.Ports = srv.Ports()
	}
	if fs, err := hostfs.New("/"); err == nil {
		if snap, err := snapshot.Collect(fs, snapshot.Options{}); err == nil {
			ready.SnapshotID = snap.ID
			ready.Snapshot, _ = json.Marshal(snap)
		}
	}
	line, err := json.Marshal(ready)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// serveTool starts a tool adapter's server (its Setup with ServeOn) and
// returns how to stop it and its port.
func serveTool(ctx context.Context, bind string, o PeerOptions) (func(), int, error) {
	p, ok := tools.ByName(o.Tool)
	pp, peerable := p.(tools.Peerable)
	if !ok || !peerable {
		return nil, 0, fmt.Errorf("%s has no server to run on a peer", o.Tool)
	}
	params := p.Defaults(false).Merge(o.Params)
	delete(params, "peer")
	delete(params, "client_cpus")
	delete(params, "server_cpus")
	if o.CPUs != "" {
		params["server_cpus"] = o.CPUs
	}
	dir, err := os.MkdirTemp("", "peer-"+o.Tool+".")
	if err != nil {
		return nil, 0, err
	}
	pp.ServeOn(bind)
	env := &probe.Env{Params: params, Dir: dir, Log: io.Discard}
	stop := func() {
		p.Teardown(env) //nolint:errcheck // the agent removes what is left
		os.RemoveAll(dir)
	}
	if err := p.Setup(ctx, env); err != nil {
		stop()
		return nil, 0, fmt.Errorf("%s server: %w", o.Tool, err)
	}
	return stop, pp.ServerPort(), nil
}

// Peer is a running peer server seen from the client.
type Peer struct {
	*Service
	Info     builtin.PeerInfo
	Port     int                // a tool server's port
	Snapshot *snapshot.Snapshot // nil when the peer could not take one
}

// StartPeer starts the peer server on target: the builtin servers, their
// threads pinned to the first of cpus, or with tool set that adapter's
// server with params, pinned to cpus ("" = unpinned).
func StartPeer(ctx context.Context, target, cpus, tool string, params map[string]string, o ExecOptions) (*Peer, error) {
	o.Args = []string{PeerServerName}
	if cpus != "" {
		o.Args = append(o.Args, "--cpus", cpus)
	}
	if tool != "" {
		o.Args = append(o.Args, "--tool", tool)
		keys := make([]string, 0, len(params))
		for k := range params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			o.Args = append(o.Args, "--param", k+"="+params[k])
		}
	}
	svc, err := StartService(ctx, target, o)
	if err != nil {
		return nil, err
	}
	var r peerReady
	if err := json.Unmarshal(svc.Ready, &r); err != nil {
		svc.Close()
		return nil, &Error{Kind: KindFailed, Target: target, Msg: "peer server announced " + strconv.Quote(string(svc.Ready)) + ": " + err.Error()}
	}
	p := &Peer{Service: svc, Info: r.PeerInfo, Port: r.Port}
	p.Info.Name = svc.Name
	if len(r.Snapshot) > 0 {
		if snap, err := snapshot.Unmarshal(r.Snapshot); err == nil {
			p.Snapshot = snap
		}
	}
	return p, nil
}
