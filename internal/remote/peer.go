package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/snapshot"
)

// PeerServerName is the hidden subcommand that serves the server side of
// the network probes on a peer host.
const PeerServerName = "peer-server"

// peerReady is the peer server's one-line announcement.
type peerReady struct {
	builtin.PeerInfo
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// ServePeer runs on the peer host: it listens on bind (default: the
// address the SSH client reached this host on, from SSH_CONNECTION — the
// peer's address on the path to the client) on ephemeral ports, prints
// one line with the address, the ports and this host's snapshot, and
// serves until ctx ends.
func ServePeer(ctx context.Context, bind string, cpu int, w io.Writer) error {
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
	srv, err := builtin.StartPeerServer(bind, cpu)
	if err != nil {
		return err
	}
	defer srv.Close()
	ready := peerReady{PeerInfo: builtin.PeerInfo{Addr: bind, Ports: srv.Ports()}}
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

// Peer is a running peer server seen from the client.
type Peer struct {
	*Service
	Info     builtin.PeerInfo
	Snapshot *snapshot.Snapshot // nil when the peer could not take one
}

// StartPeer starts the peer server on target, its threads pinned to the
// first of cpus ("" = unpinned).
func StartPeer(ctx context.Context, target, cpus string, o ExecOptions) (*Peer, error) {
	o.Args = []string{PeerServerName}
	if cpus != "" {
		o.Args = append(o.Args, "--cpus", cpus)
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
	p := &Peer{Service: svc, Info: r.PeerInfo}
	p.Info.Name = svc.Name
	if len(r.Snapshot) > 0 {
		if snap, err := snapshot.Unmarshal(r.Snapshot); err == nil {
			p.Snapshot = snap
		}
	}
	return p, nil
}
