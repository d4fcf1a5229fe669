// Package fleetrun runs one perflab command on many inventory hosts over
// SSH: in parallel bounded by --forks (never more SSH connections open at
// once than that, counted on the dialer), each host under its own timeout
// so a slow or dead host never holds up the others, with a progress line
// per host and a per-host outcome (ok, findings, unreachable, host key
// refused, failed, with a one-line reason) at the end. Results are
// attributed to the inventory name of the host and handed to a Store.
//
// Ansible's forks model is the reference (a fixed pool of workers taking
// hosts in inventory order); no Go library does SSH fan-out with these
// outcome classes, so the pool is written here on top of internal/remote.
package fleetrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/inventory"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

// Status is a host's outcome.
type Status string

const (
	OK          Status = "ok"
	Findings    Status = "findings"         // the command ran and found problems (exit 1, or failing audit findings)
	Unreachable Status = "unreachable"      // DNS, refused, timeout, no route
	HostKey     Status = "host key refused" // unknown or changed host key
	AuthFailed  Status = "auth failed"      // the host refused every key for the user
	TimedOut    Status = "timed out"        // --host-timeout passed before the host finished
	Failed      Status = "failed"           // anything else: copy, the command's own error, a lost connection
)

// Statuses lists every status in the order reports count them.
var Statuses = []Status{OK, Findings, Unreachable, HostKey, AuthFailed, TimedOut, Failed}

// Failure reports whether the status means the host did not run the command.
func (s Status) Failure() bool { return s != OK && s != Findings }

// Host is one host to run on: its inventory name and how to reach it.
type Host struct {
	Name   string
	Target remote.Target
	// Local runs the command on this machine, without SSH
	// (ansible_connection=local).
	Local bool
	// Refuse, when set, is why perflab cannot run on the host as the
	// inventory describes it (a connection plugin other than ssh or
	// local; ansible_become for a user other than root); the host's
	// outcome is failed with this reason and nothing is dialled.
	Refuse string
}

// FromInventory turns resolved inventory hosts into Hosts.
func FromInventory(hosts []inventory.Host) []Host {
	out := make([]Host, 0, len(hosts))
	for _, h := range hosts {
		t := remote.Target{Name: h.Name, User: h.User, Host: h.Address, Port: h.Port}
		if h.KeyFile != "" {
			t.IdentityFiles = []string{h.KeyFile}
		}
		fh := Host{Name: h.Name, Target: t, Local: h.Connection == "local"}
		switch {
		case h.Connection != "" && h.Connection != "ssh" && h.Connection != "local":
			fh.Refuse = "ansible_connection=" + h.Connection + ": perflab reaches hosts over SSH or runs locally (ansible_connection=ssh or local)"
		case h.Become && !fh.Local && h.User != "root":
			fh.Refuse = "ansible_become is set: perflab does not escalate privileges; connect as root (ansible_user=root) or unset ansible_become for this host"
		}
		out = append(out, fh)
	}
	return out
}

// Store keeps what the hosts sent back (internal/store.Store satisfies it).
type Store interface {
	SaveRun(ctx context.Context, r *run.Run, snap *snapshot.Snapshot) error
	SaveSnapshot(ctx context.Context, snap *snapshot.Snapshot) error
}

// Options configure a fleet run.
type Options struct {
	Forks       int           // concurrent hosts (and SSH connections); default 5
	HostTimeout time.Duration // per host, connection to cleanup; 0 = none
	Conn        remote.Options
	Binary      remote.BinaryOptions
	Args        []string // the perflab command line to run on each host
	Export      bool     // bring back and store the runs the command stored (bench, check)
	Snapshot    bool     // also take and store each host's snapshot (audit, snapshot)
	Store       Store    // nil stores nothing
	Progress    io.Writer
	// OnHost, when set, receives each host's outcome as soon as the host
	// is done (one call at a time, in the order hosts finish), with its
	// output; the Report then keeps only the outcome rows (Output and Text
	// dropped), so memory does not grow with the hosts' outputs.
	OnHost func(rep *Report, o Outcome) error
}

// Outcome is one host's result.
type Outcome struct {
	Host     string          `json:"host"`
	Address  string          `json:"address"`
	Status   Status          `json:"status"`
	Reason   string          `json:"reason,omitempty"`
	ExitCode int             `json:"exit_code"`
	Seconds  float64         `json:"seconds"`
	Phases   *Phases         `json:"phases,omitempty"` // where the host's time went
	Stored   []string        `json:"stored,omitempty"` // run ids, or "snapshot ID"
	Output   json.RawMessage `json:"output,omitempty"` // the command's output when it is JSON
	Text     string          `json:"text,omitempty"`   // the command's output otherwise
}

// Phases is where one host's time went, in seconds: the SSH connection
// (handshake and authentication), making perflab runnable there (finding
// it installed or cached, or copying it), the command (with the snapshot
// to store), and storing what came back.
type Phases struct {
	Connect float64 `json:"connect"`
	Prepare float64 `json:"prepare"`
	Run     float64 `json:"run"`
	Store   float64 `json:"store,omitempty"`
}

// Report is the fleet run's result, hosts in inventory order.
type Report struct {
	Command         string    `json:"command"`
	Forks           int       `json:"forks"`
	MaxOpenSessions int       `json:"max_open_sessions"` // the most SSH connections open at once
	Hosts           []Outcome `json:"hosts"`
	// WriteErr is the first error OnHost returned (the output could not be
	// written; the hosts still ran and were stored).
	WriteErr error `json:"-"`
}

// Run runs o.Args on every host, at most o.Forks at a time.
func Run(ctx context.Context, hosts []Host, o Options) *Report {
	if o.Forks < 1 {
		o.Forks = 5
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	cnt := &counter{}
	o.Conn.Dial = cnt.wrap(o.Conn.Dial)
	rep := &Report{Command: strings.Join(o.Args, " "), Forks: o.Forks, Hosts: make([]Outcome, len(hosts))}
	var (
		wg   sync.WaitGroup
		next = make(chan int)
		pr   = &syncWriter{w: o.Progress}
		stmu sync.Mutex // one writer to the store at a time (SQLite)
		onmu sync.Mutex // one OnHost call at a time
	)
	for w := 0; w < min(o.Forks, len(hosts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out := runHost(ctx, hosts[i], o, pr, &stmu)
				if o.OnHost != nil {
					onmu.Lock()
					if err := o.OnHost(rep, out); err != nil && rep.WriteErr == nil {
						rep.WriteErr = err
					}
					onmu.Unlock()
					out.Output, out.Text = nil, ""
				}
				rep.Hosts[i] = out
			}
		}()
	}
	for i := range hosts {
		next <- i
	}
	close(next)
	wg.Wait()
	rep.MaxOpenSessions = cnt.peak()
	return rep
}

// runHost runs the command on one host and stores what it sent back.
func runHost(ctx context.Context, h Host, o Options, pr *syncWriter, stmu *sync.Mutex) Outcome {
	start := time.Now()
	out := Outcome{Host: h.Name, Address: h.Target.Addr()}
	if h.Local {
		out.Address = "local"
	}
	fmt.Fprintf(pr, "[%s] starting on %s\n", h.Name, out.Address)
	hctx := ctx
	if o.HostTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, o.HostTimeout)
		defer cancel()
	}
	ph := &Phases{}
	res, err := execHost(hctx, h, o, prefixWriter(pr, h.Name), ph)
	switch {
	case err != nil && o.HostTimeout > 0 && time.Since(start) >= o.HostTimeout && ctx.Err() == nil:
		out.Status, out.Reason = TimedOut, fmt.Sprintf("not done after %s (--host-timeout)%s", o.HostTimeout, phaseAt(ph))
	case err != nil:
		out.Status, out.Reason = Classify(err)
	default:
		out.ExitCode = res.code
		out.Status, out.Reason = commandStatus(res.code, res.stdout)
		setOutput(&out, res.stdout)
		if o.Store != nil {
			stmu.Lock()
			t := time.Now()
			out.Stored, err = store(context.WithoutCancel(ctx), o.Store, h.Name, res)
			ph.Store = time.Since(t).Seconds()
			stmu.Unlock()
			if err != nil {
				out.Status, out.Reason = Failed, "not stored: "+err.Error()
			}
		}
	}
	out.Seconds = time.Since(start).Seconds()
	if *ph != (Phases{}) {
		out.Phases = ph
	}
	line := fmt.Sprintf("[%s] %s (%.1f s)", h.Name, out.Status, out.Seconds)
	if out.Reason != "" {
		line += ": " + out.Reason
	}
	fmt.Fprintln(pr, line)
	return out
}

// phaseAt says where a host that ran out of time was.
func phaseAt(ph *Phases) string {
	switch {
	case ph.Connect == 0:
		return ", connecting"
	case ph.Prepare == 0:
		return ", making perflab runnable there"
	}
	return ", running the command"
}

type hostResult struct {
	code     int
	stdout   []byte
	export   []byte
	snapshot []byte
}

// execHost opens one SSH connection, makes perflab runnable there (its
// cached build, or a copy), runs the command once (the agent sends the
// snapshot to store with its output) and closes everything it started
// there.
func execHost(ctx context.Context, h Host, o Options, stderr io.Writer, ph *Phases) (*hostResult, error) {
	if h.Refuse != "" {
		return nil, &remote.Error{Kind: remote.KindFailed, Target: h.Name, Msg: h.Refuse}
	}
	if h.Local {
		return execLocal(ctx, o, stderr)
	}
	conn := o.Conn
	t := h.Target
	conn.Resolved = &t
	if conn.Notes == nil {
		conn.Notes = stderr
	}
	o.Binary.Notes = stderr
	began := time.Now()
	c, err := remote.Connect(ctx, h.Name, conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ph.Connect = time.Since(began).Seconds()
	began = time.Now()
	r, err := remote.Prepare(ctx, c, o.Binary)
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		r.Close(cctx) //nolint:errcheck // best effort: the agent removed a private copy already, or its sweep will
	}()
	ph.Prepare = time.Since(began).Seconds()
	began = time.Now()
	res, err := runSpec(o, func(spec remote.RunSpec, stdout io.Writer) (*remote.Result, error) {
		return r.RunSpec(ctx, spec, stdout, stderr)
	})
	ph.Run = time.Since(began).Seconds()
	return res, err
}

// execLocal runs the command (and the snapshot) on this machine.
func execLocal(ctx context.Context, o Options, stderr io.Writer) (*hostResult, error) {
	return runSpec(o, func(spec remote.RunSpec, stdout io.Writer) (*remote.Result, error) {
		return remote.RunLocalSpec(ctx, spec, stdout, stderr)
	})
}

// runSpec runs the command once under the agent, which also sends back
// the host's snapshot when it is to be stored (the one an audit audited).
func runSpec(o Options, run func(remote.RunSpec, io.Writer) (*remote.Result, error)) (*hostResult, error) {
	var stdout bytes.Buffer
	r, err := run(remote.RunSpec{Args: o.Args, Export: o.Export, Snapshot: o.Snapshot}, &stdout)
	if err != nil {
		return nil, err
	}
	res := &hostResult{code: r.Code, stdout: stdout.Bytes(), export: r.Export, snapshot: r.Snapshot}
	if o.Snapshot && r.Code < 2 && len(r.Snapshot) == 0 {
		return nil, &remote.Error{Kind: remote.KindFailed, Msg: "the host sent no snapshot to store"}
	}
	return res, nil
}

// store saves the runs (attributed to name) and the snapshot a host sent.
func store(ctx context.Context, st Store, name string, res *hostResult) ([]string, error) {
	var ids []string
	if len(res.export) > 0 {
		ex, err := remote.Attribute(res.export, name)
		if err != nil {
			return nil, err
		}
		for _, r := range ex.Runs {
			if err := st.SaveRun(ctx, r, ex.Snapshots[r.SnapshotID]); err != nil {
				return ids, fmt.Errorf("run %s: %v", r.ID, err)
			}
			ids = append(ids, r.ID)
		}
	}
	if len(res.snapshot) > 0 {
		snap, err := snapshot.Decode(bytes.NewReader(res.snapshot))
		if err != nil {
			return ids, fmt.Errorf("snapshot from %s: %v", name, err)
		}
		if err := st.SaveSnapshot(ctx, snap); err != nil {
			return ids, fmt.Errorf("snapshot %s: %v", snap.ID, err)
		}
		ids = append(ids, "snapshot "+snap.ID)
	}
	return ids, nil
}

// Classify maps a failure to reach or use a host to its status and a
// one-line reason.
func Classify(err error) (Status, string) {
	var re *remote.Error
	reason := err.Error()
	if ok := asRemote(err, &re); ok {
		reason = re.Msg
		if re.Hint != "" {
			reason += " (" + re.Hint + ")"
		}
	}
	switch remote.KindOf(err) {
	case remote.KindUnreachable:
		return Unreachable, reason
	case remote.KindHostKeyChanged, remote.KindHostKeyUnknown:
		return HostKey, reason
	case remote.KindAuth:
		return AuthFailed, reason
	}
	if err == context.Canceled {
		return Failed, "interrupted"
	}
	return Failed, reason
}

// commandStatus judges a command that ran: exit 0 is ok unless its JSON
// output reports failing findings (an audit), 1 is findings (a check or
// --fail-on failed), anything else failed.
func commandStatus(code int, stdout []byte) (Status, string) {
	switch code {
	case 0:
		var v struct {
			Summary struct {
				Fail  int    `json:"fail"`
				Worst string `json:"worst"`
			} `json:"summary"`
		}
		if json.Unmarshal(stdout, &v) == nil && v.Summary.Fail > 0 {
			return Findings, fmt.Sprintf("%d failing finding(s), worst %s", v.Summary.Fail, v.Summary.Worst)
		}
		return OK, ""
	case 1:
		return Findings, "the command's check failed (exit 1)"
	}
	return Failed, fmt.Sprintf("the command exited %d (see its message above)", code)
}

func setOutput(o *Outcome, stdout []byte) {
	if b := bytes.TrimSpace(stdout); json.Valid(b) && len(b) > 0 {
		o.Output = json.RawMessage(b)
		return
	}
	o.Text = string(stdout)
}

// counter counts the connections open at once through a dialer.
type counter struct {
	mu        sync.Mutex
	open, max int
}

func (c *counter) wrap(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c.mu.Lock()
		c.open++ // counted from the attempt: a connection being dialled is open
		c.max = max(c.max, c.open)
		c.mu.Unlock()
		conn, err := dial(ctx, network, addr)
		if err != nil {
			c.release()
			return nil, err
		}
		return &countedConn{Conn: conn, c: c}, nil
	}
}

func (c *counter) release() {
	c.mu.Lock()
	c.open--
	c.mu.Unlock()
}

func (c *counter) peak() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max
}

type countedConn struct {
	net.Conn
	c    *counter
	once sync.Once
}

func (cc *countedConn) Close() error {
	cc.once.Do(cc.c.release)
	return cc.Conn.Close()
}
