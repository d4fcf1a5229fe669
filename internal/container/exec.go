package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/snapshot"
)

// Measuring inside a container means the probe's threads run under the
// container's CPU quota and cpuset and see its network namespace's sysctls
// and interfaces. perflab starts a copy of itself for that (Exec): forked
// from an OS thread that joined the container's network namespace (so the
// copy is born there), held on a pipe until the parent has written its PID
// into every cgroup hierarchy the container's process is in, then released.
// The copy keeps the host's mount namespace — its binary, the store and
// the tool adapters' programs are the host's — and learns which container
// it measures from the environment (snapshot.EnvTarget), so the runs'
// snapshot records the container. A container that stops while the copy
// runs ends it with one clear line (ErrStopped); Ctrl-C is passed on and
// the copy stops like any bench.

// envGoAhead marks a copy that must wait for its cgroup placement on fd 3.
const envGoAhead = "PERFLAB_TARGET_GOAHEAD"

// AwaitPlacement blocks a copy started by Exec until its parent has placed
// it in the container's cgroups; it returns at once in any other process.
func AwaitPlacement() error {
	if os.Getenv(envGoAhead) == "" {
		return nil
	}
	os.Unsetenv(envGoAhead)
	f := os.NewFile(3, "perflab-goahead")
	if f == nil {
		return errors.New("started for a container without its placement pipe")
	}
	defer f.Close()
	var b [1]byte
	if n, _ := f.Read(b[:]); n != 1 {
		return errors.New("the parent perflab could not place this process in the container's cgroups")
	}
	return nil
}

// Exec runs perflab with args inside the container's network namespace
// and cgroups and returns its exit code. stdout and stderr are the
// copy's. ctx cancelled (Ctrl-C) interrupts the copy with SIGINT.
func (t *Target) Exec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if err := t.Alive(); err != nil {
		return 0, err
	}
	fact, err := json.Marshal(t.Fact(snapshot.NetSysctls(t.View())))
	if err != nil {
		return 0, err
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer w.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = append(os.Environ(), snapshot.EnvTarget+"="+string(fact), envGoAhead+"=1")
	cmd.ExtraFiles = []*os.File{r}
	err = t.View().InNetNS(cmd.Start)
	r.Close()
	if err != nil {
		return 0, fmt.Errorf("start perflab in container %s: %w", t.C.Label(), err)
	}
	if err := t.joinCgroups(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, fmt.Errorf("place perflab in container %s's cgroups: %w", t.C.Label(), err)
	}
	if _, err := w.Write([]byte{1}); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, err
	}
	w.Close()
	return t.wait(ctx, cmd)
}

// wait waits for the copy, interrupting it on ctx and killing it when the
// container stops (what it measured then is not the container's).
func (t *Target) wait(ctx context.Context, cmd *exec.Cmd) (int, error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	interrupted, stopped := false, false
	for {
		select {
		case err := <-done:
			if stopped {
				return 0, &ErrStopped{C: t.C}
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode(), nil
			}
			return 0, err
		case <-ctx.Done():
			if !interrupted {
				interrupted = true
				_ = cmd.Process.Signal(syscall.SIGINT)
			}
		case <-tick.C:
			if !stopped && t.Alive() != nil {
				stopped = true
				_ = cmd.Process.Kill()
			}
		}
	}
}

// joinCgroups writes pid into the cgroup.procs of every hierarchy the
// container's process is in (v1 controllers, the v2 unified one), through
// the host's cgroup mounts.
func (t *Target) joinCgroups(pid int) error {
	data, err := t.Host.ReadFile("/proc/" + strconv.Itoa(t.C.PID) + "/cgroup")
	if err != nil {
		return &ErrStopped{C: t.C}
	}
	joined := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[2] == "/" {
			continue
		}
		dir := t.cgroupDir(parts[0], parts[1], parts[2])
		if dir == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return err
		}
		joined++
	}
	if joined == 0 {
		return errors.New("its process is in no cgroup below the root")
	}
	return nil
}

// cgroupDir is the host directory of one /proc/PID/cgroup line, "" when
// the hierarchy is not mounted here.
func (t *Target) cgroupDir(id, ctls, p string) string {
	var cands []string
	if id == "0" && ctls == "" {
		cands = []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}
		if t.Host.Exists("/sys/fs/cgroup/cgroup.controllers") {
			cands = []string{"/sys/fs/cgroup"}
		}
	} else {
		name := strings.TrimPrefix(ctls, "name=")
		cands = []string{"/sys/fs/cgroup/" + name}
		if i := strings.IndexByte(name, ','); i > 0 {
			cands = append(cands, "/sys/fs/cgroup/"+name[:i])
		}
	}
	for _, c := range cands {
		d := t.Host.Path(filepath.Join(c, p))
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err == nil {
			return d
		}
	}
	return ""
}
