package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/snapshot"
)

// DirPrefix starts the name of every private directory perflab makes on a
// remote host (under its $TMPDIR or /tmp).
const DirPrefix = "perflab-remote."

// AgentName is the hidden subcommand the remote side runs.
const AgentName = "remote-agent"

// AgentOptions configure the remote agent.
type AgentOptions struct {
	Dir       string        // private directory holding the copied binary; "" = make one
	Export    bool          // send the runs the command stored, as a run export
	Heartbeat time.Duration // stop when the local side is silent this long
	Args      []string      // perflab arguments to run
	// Hold runs no command: it keeps Dir (the copied binary) alive for a
	// session of several runs and removes it when the session ends.
	Hold bool
	// Keep leaves Dir to its holder: the command's store and scratch
	// files go to a subdirectory removed when it ends.
	Keep bool
	// Snapshot sends the host's snapshot after the command: the one the
	// command itself collected (audit and snapshot hand it over through
	// SnapshotEnv, so the snapshot stored is the one audited), else a
	// fresh one.
	Snapshot bool
}

// SnapshotEnv names the file a command run by the agent writes the
// snapshot it collected to (KeepSnapshot).
const SnapshotEnv = "PERFLAB_AGENT_SNAPSHOT"

// KeepSnapshot writes s as JSON to the file SnapshotEnv names, when perflab
// runs under the agent and was asked for it; it is called by the commands
// that collect a live snapshot. Errors are ignored: the agent then takes
// a snapshot itself.
func KeepSnapshot(s *snapshot.Snapshot) {
	if !KeepsSnapshot() || s == nil {
		return
	}
	path := os.Getenv(SnapshotEnv)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(s); err != nil {
		os.Remove(path) //nolint:errcheck
	}
}

// KeepsSnapshot reports whether KeepSnapshot will write the snapshot: a
// command that leaves facts out of a snapshot only it uses (the audit's
// tools) collects them all then.
func KeepsSnapshot() bool {
	return os.Getenv(SnapshotEnv) != "" && os.Getenv("PERFLAB_REMOTE") == "1"
}

// RunAgent is the remote side of a run: it runs perflab Args in a private
// directory (its store and scratch files live there), streams the output
// as frames, and stops the command and removes the directory when the run
// ends, when the local side closes stdin (Ctrl-C there), when its
// heartbeat stops (a dropped connection) or on SIGHUP/SIGTERM. It returns
// the process exit code.
func RunAgent(in io.Reader, out io.Writer, o AgentOptions) int {
	fw := newFrameWriter(out)
	fail := func(format string, args ...any) int {
		fw.send(frame{K: frameErr, D: []byte("perflab remote agent: " + fmt.Sprintf(format, args...) + "\n")}) //nolint:errcheck
		fw.send(frame{K: frameExit, Code: 3})                                                                  //nolint:errcheck
		return 3
	}
	self, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	if o.Dir == "" {
		if o.Dir, err = os.MkdirTemp("", DirPrefix); err != nil {
			return fail("private directory: %v", err)
		}
	}
	work := o.Dir
	if o.Keep {
		if work, err = os.MkdirTemp(o.Dir, "run."); err != nil {
			return fail("%v", err)
		}
	}
	defer os.RemoveAll(work)
	if !o.Keep {
		if err := os.WriteFile(filepath.Join(o.Dir, "agent.pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return fail("%v", err)
		}
		SweepStale(filepath.Dir(o.Dir), o.Dir, 2*time.Minute)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 20 * time.Second
	}
	// A write to a closed connection must not kill the agent before it
	// has cleaned up (Go exits on SIGPIPE on stdout unless notified).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGPIPE, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopNow := func() { stopOnce.Do(func() { close(stop) }) }
	go watchStdin(in, o.Heartbeat, stopNow)
	go func() {
		for s := range sigs {
			if s != syscall.SIGPIPE {
				stopNow()
			}
		}
	}()

	if o.Hold {
		fw.send(frame{K: frameOut, D: []byte("holding " + o.Dir + "\n")}) //nolint:errcheck
		<-stop
		fw.send(frame{K: frameExit}) //nolint:errcheck
		return 0
	}
	env := agentEnv(work)
	for _, d := range []string{"data", "tmp"} {
		os.MkdirAll(filepath.Join(work, d), 0o700) //nolint:errcheck
	}
	// The command's "stored N run(s) in <private dir>" would name a
	// database that is about to be removed; the local side says where
	// the runs are stored instead.
	errs := &dropLines{w: stream{fw, frameErr}, drop: filepath.Join(work, "data")}
	snapFile := filepath.Join(work, "snapshot.json")
	if o.Snapshot {
		env = append(env, SnapshotEnv+"="+snapFile)
	}
	code := runChild(self, o.Args, env, stream{fw, frameOut}, errs, stop)
	errs.flush()
	if o.Snapshot && code < 2 {
		if snap := agentSnapshot(self, env, snapFile); len(snap) > 0 {
			fw.send(frame{K: frameSnap, D: snap}) //nolint:errcheck
		}
	}
	if o.Export {
		if exp := exportRuns(self, env); len(exp) > 0 {
			fw.send(frame{K: frameExport, D: exp}) //nolint:errcheck
		}
	}
	fw.send(frame{K: frameExit, Code: code}) //nolint:errcheck
	return 0
}

// agentEnv points the command's store and scratch files into dir.
func agentEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_DATA_HOME=") && !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "TMPDIR="+filepath.Join(dir, "tmp"), "PERFLAB_REMOTE=1", "NO_COLOR=1")
}

// watchStdin calls stop on EOF (the local side closed the session or
// pressed Ctrl-C) or when no heartbeat byte arrives for timeout.
func watchStdin(in io.Reader, timeout time.Duration, stop func()) {
	beat := make(chan struct{}, 1)
	go func() {
		b := make([]byte, 64)
		for {
			if _, err := in.Read(b); err != nil {
				stop()
				return
			}
			select {
			case beat <- struct{}{}:
			default:
			}
		}
	}()
	t := time.NewTimer(timeout)
	for {
		select {
		case <-beat:
			t.Reset(timeout)
		case <-t.C:
			stop()
			return
		}
	}
}

// runChild runs perflab args in its own process group; on stop it sends
// SIGTERM (perflab stores partial work and restores what it changed), then
// SIGKILL after 10 s. It returns the exit code.
func runChild(self string, args, env []string, stdout, stderr io.Writer, stop <-chan struct{}) int {
	c := exec.Command(self, args...)
	c.Env = env
	c.Stdout, c.Stderr = stdout, stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		fmt.Fprintf(stderr, "perflab remote agent: %v\n", err)
		return 3
	}
	pgid := c.Process.Pid
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-stop:
			syscall.Kill(-pgid, syscall.SIGTERM) //nolint:errcheck
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
			}
		}
	}()
	err := c.Wait()
	close(done)
	// Nothing the command started may outlive the run.
	syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 3
		}
		return ee.ExitCode()
	}
	return 3
}

// agentSnapshot is the snapshot the command wrote to file, or else a
// fresh one.
func agentSnapshot(self string, env []string, file string) []byte {
	if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
		return b
	}
	return selfOutput(60*time.Second, self, env, "snapshot", "--format", "json")
}

// exportRuns returns the runs the command stored, as a run export ("" when
// it stored none).
func exportRuns(self string, env []string) []byte {
	return selfOutput(30*time.Second, self, env, "runs", "export")
}

// selfOutput runs perflab itself with args and returns its standard
// output, or nil if it failed or ran over d.
func selfOutput(d time.Duration, self string, env []string, args ...string) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	c := exec.CommandContext(ctx, self, args...)
	c.Env = env
	var out bytes.Buffer
	c.Stdout = &out
	if err := c.Run(); err != nil {
		return nil
	}
	return out.Bytes()
}

// SweepStale removes private directories under parent left by agents that
// died without cleaning up (SIGKILL, a reboot of nothing but the agent):
// directories owned by this user whose agent.pid names no live agent and
// that are older than minAge (a younger one may be a copy in progress).
func SweepStale(parent, keep string, minAge time.Duration) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), DirPrefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if dir == keep {
			continue
		}
		fi, err := os.Lstat(dir)
		if err != nil || !ownedByMe(fi) || time.Since(fi.ModTime()) < minAge {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, "agent.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && agentAlive(pid, dir) {
				continue
			}
		}
		os.RemoveAll(dir) //nolint:errcheck
	}
}

func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// agentAlive reports whether pid is an agent working in dir (pid reuse by
// an unrelated process does not keep a directory).
func agentAlive(pid int, dir string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && bytes.Contains(b, []byte(AgentName)) && (bytes.Contains(b, []byte(dir)) || !bytes.Contains(b, []byte("--dir")))
}

// dropLines passes lines through except those containing drop.
type dropLines struct {
	w    io.Writer
	drop string
	buf  []byte
}

func (d *dropLines) Write(p []byte) (int, error) {
	d.buf = append(d.buf, p...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := d.buf[:i+1]
		if !bytes.Contains(line, []byte(d.drop)) {
			d.w.Write(line) //nolint:errcheck
		}
		d.buf = d.buf[i+1:]
	}
}

func (d *dropLines) flush() {
	if len(d.buf) > 0 && !bytes.Contains(d.buf, []byte(d.drop)) {
		d.w.Write(d.buf) //nolint:errcheck
	}
	d.buf = nil
}
