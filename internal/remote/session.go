package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// BinaryOptions say where the perflab build for the remote host comes from.
type BinaryOptions struct {
	// Path is a perflab build for the remote architecture (--remote-binary);
	// "" = this executable when the architectures match, else a sibling
	// file perflab-linux-ARCH next to it.
	Path string
	// Notes receives one-line notes (what was copied). nil discards.
	Notes io.Writer
}

// Runner runs perflab commands on one connected host.
type Runner struct {
	C      *Client
	Arch   string // remote GOARCH
	exe    string // remote perflab path
	dir    string // private directory holding the copied binary ("" when an installed one is used)
	copied bool
	mode   string // "", "--hold" or "--keep": see AgentOptions
}

// goArch maps `uname -m` to GOARCH.
func goArch(m string) string {
	switch strings.TrimSpace(m) {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64", "armv8l":
		return "arm64"
	}
	return ""
}

// LocalBinary finds the perflab build for arch.
func LocalBinary(arch, explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("--remote-binary %s: %v", explicit, err)
		}
		return explicit, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if arch == runtime.GOARCH {
		return self, nil
	}
	sib := filepath.Join(filepath.Dir(self), "perflab-linux-"+arch)
	if _, err := os.Stat(sib); err == nil {
		return sib, nil
	}
	return "", fmt.Errorf("the remote host is linux/%s but this perflab is linux/%s and %s does not exist", arch, runtime.GOARCH, sib)
}

func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// output runs a shell command and returns its stdout.
func (c *Client) output(ctx context.Context, cmd string, stdin io.Reader) (string, string, error) {
	s, err := c.NewSession()
	if err != nil {
		return "", "", c.sessionErr(err)
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &out, &errb, stdin
	done := make(chan error, 1)
	go func() { done <- s.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		s.Close()
		return "", "", ctx.Err()
	}
	return out.String(), strings.TrimSpace(errb.String()), err
}

func (c *Client) sessionErr(err error) error {
	select {
	case <-c.lost:
		return &Error{Kind: KindLost, Target: c.Input, Err: err, Msg: "connection lost (no answer to keepalives for 15 s)"}
	default:
	}
	return &Error{Kind: KindFailed, Target: c.Input, Err: err, Msg: "opening an SSH session: " + err.Error()}
}

// Prepare makes perflab runnable on the host: an installed perflab with
// the same build (same SHA-256) is used as it is; otherwise the build for
// the remote `uname -m` is copied into a private directory and its
// checksum verified there.
func Prepare(ctx context.Context, c *Client, o BinaryOptions) (*Runner, error) {
	notes := o.Notes
	if notes == nil {
		notes = io.Discard
	}
	out, _, err := c.output(ctx, `uname -s -m; p=$(command -v perflab 2>/dev/null) && sha256sum "$p"`, nil)
	if err != nil && out == "" {
		return nil, &Error{Kind: KindFailed, Target: c.Input, Err: err, Msg: "running uname: " + err.Error()}
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	f := strings.Fields(lines[0])
	if len(f) != 2 || f[0] != "Linux" {
		return nil, &Error{Kind: KindFailed, Target: c.Input, Msg: fmt.Sprintf("not a Linux host (uname: %q)", strings.TrimSpace(lines[0]))}
	}
	arch := goArch(f[1])
	if arch == "" {
		return nil, &Error{Kind: KindNoBinary, Target: c.Input, Msg: "perflab has no build for " + f[1], Hint: "perflab runs on linux/amd64 and linux/arm64"}
	}
	bin, err := LocalBinary(arch, o.Path)
	if err != nil {
		return nil, &Error{Kind: KindNoBinary, Target: c.Input, Msg: err.Error(),
			Hint: fmt.Sprintf("build it with 'CGO_ENABLED=0 GOARCH=%s go build -o perflab-linux-%s ./cmd/perflab' next to this perflab, or pass --remote-binary FILE", arch, arch)}
	}
	sum, size, err := fileSHA256(bin)
	if err != nil {
		return nil, &Error{Kind: KindNoBinary, Target: c.Input, Msg: "reading " + bin + ": " + err.Error()}
	}
	r := &Runner{C: c, Arch: arch}
	if len(lines) > 1 {
		if g := strings.Fields(lines[1]); len(g) == 2 && g[0] == sum {
			r.exe = g[1]
			fmt.Fprintf(notes, "note: %s: using the installed %s (same build)\n", c.Input, g[1])
			return r, nil
		}
	}
	if err := r.upload(ctx, bin, sum, size); err != nil {
		return nil, err
	}
	fmt.Fprintf(notes, "note: %s: copied perflab (linux/%s, %.1f MiB, sha256 %s…) to %s\n", c.Input, arch, float64(size)/(1<<20), sum[:12], r.dir)
	return r, nil
}

// uploadScript makes a private directory, receives the binary on stdin and
// checks its size and SHA-256 there; on any failure (a dropped connection
// truncates stdin) it removes the directory.
const uploadScript = `umask 077
d=$(mktemp -d "${TMPDIR:-/tmp}/` + DirPrefix + `XXXXXXXX") || exit 1
if cat > "$d/perflab" && [ "$(wc -c < "$d/perflab")" -eq %d ] && [ "$(sha256sum < "$d/perflab" | cut -d' ' -f1)" = %s ]; then
  chmod 700 "$d/perflab" && echo "$d"
else
  rm -rf "$d"; echo "copy of perflab failed its size or checksum check" >&2; exit 1
fi`

func (r *Runner) upload(ctx context.Context, bin, sum string, size int64) error {
	f, err := os.Open(bin)
	if err != nil {
		return &Error{Kind: KindNoBinary, Target: r.C.Input, Msg: err.Error()}
	}
	defer f.Close()
	out, errText, err := r.C.output(ctx, fmt.Sprintf(uploadScript, size, sum), f)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := errText
		if msg == "" {
			msg = err.Error()
		}
		return &Error{Kind: KindFailed, Target: r.C.Input, Err: err, Msg: "copying perflab: " + msg, Hint: "is there space in the remote $TMPDIR or /tmp, and is it mounted without noexec?"}
	}
	r.dir = strings.TrimSpace(out)
	r.exe = r.dir + "/perflab"
	r.copied = true
	return nil
}

// Result is what a remote command returned.
type Result struct {
	Code   int    // the command's exit code
	Export []byte // runs it stored (a run export), when asked for
}

// Run runs perflab args on the host under the watchdog agent, writing the
// command's stdout and stderr to stdout and stderr as they arrive. On
// ctx's cancellation the remote command gets SIGTERM (it stores partial
// work) and Run waits up to 20 s for it to finish. The copied binary and
// the private directory are removed by the agent when the run ends, and
// the agent stops everything when the connection drops.
func (r *Runner) Run(ctx context.Context, args []string, export bool, stdout, stderr io.Writer) (*Result, error) {
	s, err := r.C.NewSession()
	if err != nil {
		return nil, r.C.sessionErr(err)
	}
	defer s.Close()
	in, err := s.StdinPipe()
	if err != nil {
		return nil, r.C.sessionErr(err)
	}
	outp, err := s.StdoutPipe()
	if err != nil {
		return nil, r.C.sessionErr(err)
	}
	var agentErr bytes.Buffer
	s.Stderr = &limitedBuffer{b: &agentErr, n: 4096}
	cmd := []string{"exec", shellQuote(r.exe), AgentName}
	if r.dir != "" {
		cmd = append(cmd, "--dir", shellQuote(r.dir))
		if r.mode != "" {
			cmd = append(cmd, r.mode)
		}
	}
	if export {
		cmd = append(cmd, "--export")
	}
	if len(args) > 0 {
		cmd = append(cmd, "--")
	}
	for _, a := range args {
		cmd = append(cmd, shellQuote(a))
	}
	if err := s.Start(strings.Join(cmd, " ")); err != nil {
		return nil, r.C.sessionErr(err)
	}
	done := make(chan struct{})
	defer close(done)
	go heartbeat(ctx, in, done)
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
			// Ask for a clean stop; give up on the connection if the
			// remote does not finish in time.
			in.Close()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				r.C.Close()
			}
		}
	}()
	res, got := readFrames(outp, stdout, stderr)
	waitErr := s.Wait()
	if got {
		return res, nil
	}
	select {
	case <-r.C.lost:
		return res, &Error{Kind: KindLost, Target: r.C.Input, Msg: "connection lost during the run (no answer to keepalives for 15 s)",
			Hint: "the remote agent stops the run and removes its files when its heartbeat stops"}
	default:
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	msg := strings.TrimSpace(agentErr.String())
	if msg == "" && waitErr != nil {
		msg = waitErr.Error()
	}
	if _, ok := waitErr.(*ssh.ExitMissingError); ok || msg == "" {
		msg = "the connection closed before the command finished"
		return res, &Error{Kind: KindLost, Target: r.C.Input, Msg: msg}
	}
	return res, &Error{Kind: KindFailed, Target: r.C.Input, Msg: "remote perflab failed: " + oneLine(msg)}
}

// heartbeat writes a byte every 2 s; the agent stops the run when they stop.
func heartbeat(ctx context.Context, w io.Writer, done <-chan struct{}) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := w.Write([]byte{'\n'}); err != nil {
				return
			}
		}
	}
}

// readFrames copies the agent's framed stream to stdout and stderr until
// it ends, and returns the export and exit code it carried (got: an exit
// frame arrived, so the command finished).
func readFrames(r io.Reader, stdout, stderr io.Writer) (*Result, bool) {
	res, got := &Result{}, false
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var fr frame
		if err := dec.Decode(&fr); err != nil {
			return res, got
		}
		switch fr.K {
		case frameOut:
			stdout.Write(fr.D) //nolint:errcheck
		case frameErr:
			stderr.Write(fr.D) //nolint:errcheck
		case frameExport:
			res.Export = fr.D
		case frameExit:
			res.Code, got = fr.Code, true
		}
	}
}

// Close removes a copied binary's directory if the agent did not (it was
// never started) and closes nothing else; the connection is the caller's.
func (r *Runner) Close(ctx context.Context) error {
	if !r.copied || r.dir == "" {
		return nil
	}
	_, _, err := r.C.output(ctx, "rm -rf "+shellQuote(r.dir), nil)
	return err
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
