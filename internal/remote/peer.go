package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/bench"
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

// StartPeer starts a peer server in an open session: the builtin
// servers, their threads pinned to the first of cpus, or with tool set
// that adapter's server with params, pinned to cpus ("" = unpinned).
// Several peers share the session's copy of perflab.
func StartPeer(ctx context.Context, sess *Session, cpus, tool string, params map[string]string, stderr io.Writer) (*Peer, error) {
	o := ExecOptions{Stderr: stderr}
	target := sess.Target
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
	svc, err := StartServiceIn(ctx, sess, o)
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

// ErrNoServerSide: none of the planned probes can put a server on a peer.
var ErrNoServerSide = errors.New("none of the selected probes has a server side")

// PeerSet is the peer servers of one bench --peer session.
type PeerSet struct {
	sess     *Session
	peers    []*Peer
	Snapshot *snapshot.Snapshot // the peer's, to store with the runs
	stderr   io.Writer
}

// AttachPeers opens one session to target and starts there perflab's own
// servers for the builtin network probes of the plan (one for all) and
// each tool adapter's server, then points every such probe at its server
// and records the peer's name in its parameters.
func AttachPeers(ctx context.Context, target, cpus string, plan *bench.Plan, o ExecOptions) (*PeerSet, error) {
	served := 0
	for _, it := range plan.Items {
		switch it.Probe.(type) {
		case builtin.PeerAware, tools.Peerable:
			served++
		}
	}
	if served == 0 {
		return nil, ErrNoServerSide
	}
	sess, err := OpenSession(ctx, target, o)
	if err != nil {
		return nil, err
	}
	ps := &PeerSet{sess: sess, stderr: o.Stderr}
	var shared *Peer // perflab's own servers, for every builtin probe
	for i, it := range plan.Items {
		var p *Peer
		var err error
		switch pr := it.Probe.(type) {
		case builtin.PeerAware:
			if shared == nil {
				if shared, err = StartPeer(ctx, sess, cpus, "", nil, o.Stderr); err == nil {
					ps.peers = append(ps.peers, shared)
				}
			}
			if p = shared; err == nil {
				err = pr.SetPeer(&p.Info)
			}
		case tools.Peerable:
			if p, err = StartPeer(ctx, sess, cpus, pr.Name(), it.Params, o.Stderr); err == nil {
				ps.peers = append(ps.peers, p)
				pr.UsePeer(p.Info.Name, p.Info.Addr, p.Port)
			}
		default:
			continue
		}
		if err != nil {
			ps.Close()
			return nil, err
		}
		if ps.Snapshot == nil {
			ps.Snapshot = p.Snapshot
		}
		plan.Items[i].Params["peer"] = p.Info.Name
		fmt.Fprintf(o.Stderr, "peer %s: %s server on %s\n", p.Info.Name, it.Probe.Name(), p.Info.Addr)
	}
	return ps, nil
}

// Close stops every peer server and ends the session (which removes the
// copied perflab there).
func (ps *PeerSet) Close() {
	for _, p := range ps.peers {
		if err := p.Close(); err != nil {
			fmt.Fprintf(ps.stderr, "note: peer %s: %v\n", p.Info.Name, err)
		}
	}
	ps.sess.Close()
}
