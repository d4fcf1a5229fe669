package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/flame/fold"
)

// Options say what to record and how.
type Options struct {
	Target
	Duration time.Duration // how long to record a PID or all CPUs; caps a command (0: until it exits)
	Freq     int           // sampling frequency in Hz; <= 0 means 499
	Event    string        // perf event; "" picks cycles, or cpu-clock where unsupported
	Stderr   io.Writer     // the profiled command's output and perf's messages
}

// Profile is a recorded, folded profile.
type Profile struct {
	Fold      *fold.Result
	Event     string
	EventNote string // why this event was chosen, when it was not asked for
	Freq      int
	Elapsed   time.Duration
	What      string // "PID 1234", "all CPUs", "`cmd args`"
}

// Record checks readiness, records with perf record -g and folds the
// samples (kernel and JIT frames annotated, so palettes can tell them
// apart).
func Record(ctx context.Context, r *Readiness, opt Options) (*Profile, error) {
	if opt.Freq <= 0 {
		opt.Freq = 499
	}
	if opt.Stderr == nil {
		opt.Stderr = io.Discard
	}
	p := &Profile{Freq: opt.Freq, Event: opt.Event}
	if p.Event == "" {
		p.Event, p.EventNote = pickEvent(ctx, r.Perf)
	}
	dir, err := os.MkdirTemp("", "perflab-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "perf.data")

	args := []string{"record", "-q", "-g", "-F", strconv.Itoa(opt.Freq), "-e", p.Event, "-o", data}
	switch {
	case opt.PID > 0:
		args = append(args, "-p", strconv.Itoa(opt.PID), "--", "sleep", secs(opt.Duration))
		p.What = fmt.Sprintf("PID %d", opt.PID)
	case opt.All:
		args = append(args, "-a", "--", "sleep", secs(opt.Duration))
		p.What = "all CPUs"
	case len(opt.Command) > 0:
		args = append(args, "--")
		args = append(args, opt.Command...)
		p.What = "`" + strings.Join(opt.Command, " ") + "`"
	default:
		return nil, clierr.Usagef("give -p PID, -a, or -- COMMAND", "nothing to profile")
	}

	rctx := ctx
	if len(opt.Command) > 0 && opt.Duration > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, opt.Duration)
		defer cancel()
	}
	var perfErr bytes.Buffer
	cmd := exec.CommandContext(rctx, r.Perf, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // perf writes its data on SIGINT
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdout = opt.Stderr
	cmd.Stderr = &perfErr
	if len(opt.Command) > 0 {
		// The profiled command inherits perf's stderr: its output is the
		// user's. With -p or -a only perf writes there, and its multi-line
		// advice is condensed into the one-line error below instead.
		cmd.Stderr = io.MultiWriter(&perfErr, opt.Stderr)
	}
	start := time.Now()
	runErr := cmd.Run()
	p.Elapsed = time.Since(start)
	if st, err := os.Stat(data); err != nil || st.Size() == 0 {
		return nil, perfFailure("perf record", runErr, perfErr.String())
	}

	script := exec.CommandContext(ctx, r.Perf, "script", "-F", "+pid", "-i", data)
	var scriptErr bytes.Buffer
	script.Stderr = &scriptErr
	out, err := script.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := script.Start(); err != nil {
		return nil, perfFailure("perf script", err, "")
	}
	res, ferr := fold.Fold(out, fold.Options{Kernel: true, JIT: true, Threads: runtime.GOMAXPROCS(0)})
	if ferr != nil {
		io.Copy(io.Discard, out)
	}
	if err := script.Wait(); err != nil {
		return nil, perfFailure("perf script", err, scriptErr.String())
	}
	if ferr != nil {
		return nil, ferr
	}
	p.Fold = res
	if len(res.Profile.Stacks) == 0 {
		return nil, clierr.Runtimef("profile longer (-d), raise -F, or check that the target uses CPU",
			"perf recorded no samples of %s for %s", p.Event, p.What)
	}
	return p, nil
}

func secs(d time.Duration) string {
	if d <= 0 {
		d = 10 * time.Second
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// pickEvent uses the cycles hardware event when the host counts it and
// falls back to the cpu-clock software event (a timer interrupt per
// sample) on hosts without a PMU, such as most VMs.
func pickEvent(ctx context.Context, perf string) (string, string) {
	c := exec.CommandContext(ctx, perf, "stat", "-x,", "-e", "cycles", "--", "true")
	out, err := c.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("<not supported>")) || bytes.Contains(out, []byte("<not counted>")) {
		return "cpu-clock", "hardware events are not supported on this host (a VM without a PMU?): sampling the software cpu-clock event"
	}
	return "cycles", ""
}

// perfFailure turns a failed perf run into one line with perf's own last
// words, which usually name the problem.
func perfFailure(what string, err error, stderr string) error {
	last := perfLastWords(stderr)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			last = "killed by " + st.Signal().String() + "; " + last
		}
	}
	if last == "" && err != nil {
		last = err.Error()
	}
	hint := "run `perflab audit` to check perf_event_paranoid and kptr_restrict"
	if strings.Contains(last, "Permission denied") || strings.Contains(stderr, "paranoid") {
		hint = "run as root or lower kernel.perf_event_paranoid (see `perflab audit`)"
	}
	return clierr.Runtimef(hint, "%s failed: %s", what, last)
}

// perfLastWords picks the line of perf's stderr that names the problem:
// the one after "Error:" when perf prints its multi-line advice (the last
// line there is about /etc/sysctl.conf), otherwise the last line.
func perfLastWords(stderr string) string {
	last, afterError := "", false
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "[ perf record"):
		case l == "Error:":
			afterError = true
		case afterError:
			return l
		default:
			last = l
		}
	}
	return last
}
