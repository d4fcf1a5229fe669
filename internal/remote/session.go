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
	"sync"
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
	// Cache keeps the copied build on the host, named by its SHA-256, in
	// ${XDG_CACHE_HOME:-~/.cache}/perflab/bin (private to the login user;
	// the three newest builds are kept), so the next run there copies
	// nothing. Without it the copy is private to the run and removed when
	// it ends.
	Cache bool
}

// CacheDir is where a cached build lives on a host, as a shell word.
const CacheDir = `"${XDG_CACHE_HOME:-$HOME/.cache}/perflab/bin"`

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

// sums caches the SHA-256 of local builds: a fleet run prepares many
// hosts from the same file (keyed by path, size and modification time).
var sums sync.Map

type sumKey struct {
	path  string
	size  int64
	mtime time.Time
}

type sumVal struct {
	sum  string
	size int64
}

func fileSHA256(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	key := sumKey{path, fi.Size(), fi.ModTime()}
	if v, ok := sums.Load(key); ok {
		return v.(sumVal).sum, v.(sumVal).size, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	sums.Store(key, sumVal{sum, n})
	return sum, n, nil
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
	// The build for this machine's architecture is the likely one: when
	// caching, the same round trip asks whether the host has it cached.
	probe := `uname -s -m; p=$(command -v perflab 2>/dev/null) && sha256sum "$p" || echo`
	var likely string
	var likelySize int64
	if o.Cache {
		if bin, err := LocalBinary(runtime.GOARCH, o.Path); err == nil {
			if likely, likelySize, err = fileSHA256(bin); err == nil {
				probe += "; " + cachedScript(likely, likelySize)
			}
		}
	}
	out, _, err := c.output(ctx, probe, nil)
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
	if o.Cache {
		return r, r.cached(ctx, bin, sum, size, likely, lines, notes)
	}
	if err := r.upload(ctx, bin, sum, size); err != nil {
		return nil, err
	}
	fmt.Fprintf(notes, "note: %s: copied perflab (linux/%s, %.1f MiB, sha256 %s…) to %s\n", c.Input, arch, float64(size)/(1<<20), sum[:12], r.dir)
	return r, nil
}

// cachedScript prints the path of the cached build sum when the host has
// it: a regular file of the right size owned by the login user (the
// directory is private to that user, and a build enters it only by an
// atomic rename after its checksum was verified there, so it is not
// hashed again on every run).
func cachedScript(sum string, size int64) string {
	return fmt.Sprintf(`f=%s/perflab-%s; if [ -f "$f" ] && [ ! -L "$f" ] && [ -O "$f" ] && [ "$(wc -c < "$f")" -eq %d ]; then echo "cached $f"; fi`, CacheDir, sum, size)
}

// cacheScript receives a build on stdin into the cache directory, checks
// its size and SHA-256 there, renames it into place (two controllers
// copying the same build at once both succeed), keeps the three newest
// builds and prints the path.
const cacheScript = `umask 077
d=` + CacheDir + `
mkdir -p "$d" || exit 1
find "$d" -maxdepth 1 -name '.upload.*' -mmin +60 -exec rm -f {} + 2>/dev/null
t=$(mktemp "$d/.upload.XXXXXXXX") || exit 1
if cat > "$t" && [ "$(wc -c < "$t")" -eq %[1]d ] && [ "$(` + sha256Cmd + ` < "$t" | cut -d' ' -f1)" = %[2]s ]; then
  chmod 700 "$t" && mv -f "$t" "$d/perflab-%[2]s" && touch "$d/perflab-%[2]s" || exit 1
  ls -t "$d" | grep '^perflab-' | tail -n +4 | while read -r old; do rm -f "$d/$old"; done
  echo "$d/perflab-%[2]s"
else
  rm -f "$t"; echo "copy of perflab failed its size or checksum check" >&2; exit 1
fi`

// sha256Cmd prints the SHA-256 of stdin first on its line: OpenSSL's when
// the host has it (hardware SHA extensions: a tenth of coreutils'
// sha256sum's CPU time for perflab's 36 MB), else sha256sum.
const sha256Cmd = `{ if command -v openssl >/dev/null 2>&1; then openssl dgst -sha256 -r; else sha256sum; fi; }`

// cached uses the host's cached build sum, or copies it into the cache.
func (r *Runner) cached(ctx context.Context, bin, sum string, size int64, likely string, lines []string, notes io.Writer) error {
	if sum == likely {
		for _, l := range lines[1:] {
			if p, ok := strings.CutPrefix(l, "cached "); ok {
				r.exe = p
				fmt.Fprintf(notes, "note: %s: using the cached perflab %s\n", r.C.Input, p)
				return nil
			}
		}
	} else if out, _, err := r.C.output(ctx, cachedScript(sum, size), nil); err == nil {
		if p, ok := strings.CutPrefix(strings.TrimSpace(out), "cached "); ok {
			r.exe = p
			return nil
		}
	}
	f, err := os.Open(bin)
	if err != nil {
		return &Error{Kind: KindNoBinary, Target: r.C.Input, Msg: err.Error()}
	}
	defer f.Close()
	out, errText, err := r.C.output(ctx, fmt.Sprintf(cacheScript, size, sum), f)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errText == "" {
			errText = err.Error()
		}
		return &Error{Kind: KindFailed, Target: r.C.Input, Err: err, Msg: "copying perflab into the cache: " + oneLine(errText), Hint: "is there space in ~/.cache on the host? --no-binary-cache copies it to $TMPDIR for the run only"}
	}
	r.exe = strings.TrimSpace(out)
	fmt.Fprintf(notes, "note: %s: copied perflab (linux/%s, %.1f MiB, sha256 %s…) to %s\n", r.C.Input, r.Arch, float64(size)/(1<<20), sum[:12], r.exe)
	return nil
}

// uploadScript makes a private directory, receives the binary on stdin and
// checks its size and SHA-256 there; on any failure (a dropped connection
// truncates stdin) it removes the directory.
const uploadScript = `umask 077
d=$(mktemp -d "${TMPDIR:-/tmp}/` + DirPrefix + `XXXXXXXX") || exit 1
if cat > "$d/perflab" && [ "$(wc -c < "$d/perflab")" -eq %d ] && [ "$(` + sha256Cmd + ` < "$d/perflab" | cut -d' ' -f1)" = %s ]; then
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
	Code     int    // the command's exit code
	Export   []byte // runs it stored (a run export), when asked for
	Snapshot []byte // the host's snapshot (JSON), when asked for
}

// RunSpec is one command to run under the agent.
type RunSpec struct {
	Args     []string
	Export   bool // send back the runs it stored
	Snapshot bool // send back the host's snapshot (AgentOptions.Snapshot)
}

// Run runs perflab args on the host under the watchdog agent, writing the
// command's stdout and stderr to stdout and stderr as they arrive. On
// ctx's cancellation the remote command gets SIGTERM (it stores partial
// work) and Run waits up to 20 s for it to finish. The copied binary and
// the private directory are removed by the agent when the run ends, and
// the agent stops everything when the connection drops.
func (r *Runner) Run(ctx context.Context, args []string, export bool, stdout, stderr io.Writer) (*Result, error) {
	return r.RunSpec(ctx, RunSpec{Args: args, Export: export}, stdout, stderr)
}

// RunSpec is Run with the snapshot option.
func (r *Runner) RunSpec(ctx context.Context, spec RunSpec, stdout, stderr io.Writer) (*Result, error) {
	args := spec.Args
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
	if spec.Export {
		cmd = append(cmd, "--export")
	}
	if spec.Snapshot {
		cmd = append(cmd, "--snapshot")
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
	defer superviseAgent(ctx, in, func() { r.C.Close() })()
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

// superviseAgent keeps an agent's run going and stops it on ctx's
// cancellation: it writes the heartbeat to the agent's stdin, and when ctx
// is cancelled closes that stdin (the agent stops the command cleanly: it
// stores partial work) and calls kill if the run has not ended 20 s
// later. The returned function marks the run ended.
func superviseAgent(ctx context.Context, in io.WriteCloser, kill func()) (ended func()) {
	done := make(chan struct{})
	go heartbeat(ctx, in, done)
	go func() {
		select {
		case <-done:
		case <-ctx.Done():
			in.Close()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				kill()
			}
		}
	}()
	return func() { close(done) }
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
		case frameSnap:
			res.Snapshot = fr.D
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
