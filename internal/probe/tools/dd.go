package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"golang.org/x/sys/unix"
)

// DD is the sequential-write row of seed 004's baseline ("dd 顺序写", 125
// MB/s on the VM whose RAID card was in write-through against 1263 MB/s in
// the container): coreutils dd on a scratch file in the directory under
// test, through the page cache and around it, so that the report shows the
// two side by side.
type DD struct {
	path, version string
	tests         []string
	bs            int64
	count         int
	dir, file     string
}

// ddTests, in the order an iteration runs them: the writes leave the file
// in place for the reads.
var ddTests = []string{"write_fdatasync", "write_direct", "write_cached", "read", "read_cached"}

func (*DD) Name() string { return "dd" }

func (*DD) Doc() string {
	return "coreutils dd on one file of bs×count bytes in the scratch directory (--dir, the filesystem under test), " +
		"run with LC_ALL=C, in MB/s (1e6 bytes/s, dd's unit) computed from the bytes and seconds dd reports. " +
		"write_fdatasync: `dd if=/dev/zero of=F bs=B count=N conv=fdatasync` (the write and its flush to the device, " +
		"the usual dd disk test); write_direct: the same with oflag=direct (O_DIRECT, no page cache); write_cached: " +
		"without either, so it ends when the data is in the page cache; read: `dd if=F of=/dev/null bs=B count=N` " +
		"after perflab has dropped the file's pages from the cache with posix_fadvise(POSIX_FADV_DONTNEED) on that " +
		"file alone (no global drop_caches); read_cached: the same read again, served from the page cache. The " +
		"data is zeros, which a compressing filesystem (btrfs, ZFS with compression) stores in no time."
}

func (*DD) Defaults(quick bool) probe.Params {
	p := probe.Params{"tests": strings.Join(ddTests, ","), "bs": "1MiB", "count": "1024"}
	if quick {
		p["count"] = "256"
	}
	return p
}

func (d *DD) parse(p probe.Params) error {
	const n = "dd"
	if err := checkKnown(n, p, d.Defaults(false)); err != nil {
		return err
	}
	var err error
	if d.tests, err = listParam(n, p, "tests", strings.Join(ddTests, ","), ddTests); err != nil {
		return err
	}
	// Run them in ddTests' order whatever the user's: reads need the file.
	var ordered []string
	for _, t := range ddTests {
		for _, u := range d.tests {
			if t == u {
				ordered = append(ordered, t)
			}
		}
	}
	d.tests = ordered
	// O_DIRECT needs the block size aligned to the logical block size;
	// 4 KiB multiples are aligned on every device.
	if d.bs, err = sizeParam(n, p, "bs", 1<<20, 4096, 1<<30); err != nil {
		return err
	}
	if d.bs%4096 != 0 {
		return paramError(n, "bs", "%d bytes is not a multiple of 4 KiB (oflag=direct needs aligned blocks)", d.bs)
	}
	if d.count, err = intParam(n, p, "count", 1024, 1, 1<<24); err != nil {
		return err
	}
	if d.bs*int64(d.count) > 1<<40 {
		return paramError(n, "count", "bs×count is more than 1 TiB")
	}
	return nil
}

func (d *DD) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := d.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, t := range d.tests {
		ms = append(ms, run.Metric{Name: t + ".mb_per_sec", Unit: "MB/s", Better: run.Higher})
	}
	return ms, nil
}

func (d *DD) Available() error {
	// conv=fdatasync and oflag=direct are in every coreutils dd since 5.x.
	path, v, err := findTool(context.Background(), "dd", "", "")
	if err != nil {
		return err
	}
	d.path, d.version = path, v
	return nil
}

func (d *DD) Setup(ctx context.Context, env *probe.Env) error {
	if err := d.parse(env.Params); err != nil {
		return err
	}
	if err := d.Available(); err != nil {
		return err
	}
	env.ToolVersion = d.version
	var err error
	if d.dir, err = makeDir(env, "dd"); err != nil {
		return err
	}
	d.file = filepath.Join(d.dir, "perflab.dd")
	need := d.bs * int64(d.count)
	var st unix.Statfs_t
	if err := unix.Statfs(d.dir, &st); err == nil {
		if free := int64(st.Bavail) * st.Bsize; free < need+need/10 {
			return paramError("dd", "count", "the file needs %d MiB and %s has %d MiB free; lower count or bs, or use another --dir",
				need>>20, env.Dir, free>>20)
		}
	}
	// Reads alone need a file to read: lay it out, flushed.
	if !strings.HasPrefix(d.tests[0], "write") {
		argv := d.writeArgv("write_fdatasync")
		addNote(&env.Notes, "laid out with: "+shellJoin(argv))
		if _, err := d.run(ctx, argv); err != nil {
			return err
		}
	}
	return nil
}

func (d *DD) writeArgv(test string) []string {
	argv := []string{d.path, "if=/dev/zero", "of=" + d.file, "bs=" + strconv.FormatInt(d.bs, 10), "count=" + strconv.Itoa(d.count)}
	switch test {
	case "write_fdatasync":
		argv = append(argv, "conv=fdatasync")
	case "write_direct":
		argv = append(argv, "oflag=direct")
	}
	return argv
}

func (d *DD) readArgv() []string {
	return []string{d.path, "if=" + d.file, "of=/dev/null", "bs=" + strconv.FormatInt(d.bs, 10), "count=" + strconv.Itoa(d.count)}
}

// run runs one dd and parses what it printed.
func (d *DD) run(ctx context.Context, argv []string) (DDResult, error) {
	res, err := runTool(ctx, invocation{tool: "dd", argv: argv, dir: d.dir, env: []string{"LC_ALL=C"}, timeout: 30 * time.Minute})
	r, perr := ParseDD(string(res.stderr))
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) && perr != nil && len(r.Errors) > 0 {
			te.Reason = r.Errors[0]
			if strings.Contains(argv[len(argv)-1], "direct") && strings.Contains(r.Errors[0], "Invalid argument") {
				te.Reason += " (the filesystem refuses O_DIRECT: use another --dir or --param dd:tests without write_direct)"
			}
		}
		return r, err
	}
	if perr != nil {
		return r, &ToolError{Tool: "dd", Command: argv, ExitCode: res.exitCode, Reason: perr.Error(), Tail: tailOf(res)}
	}
	if want := d.bs * int64(d.count); r.Bytes != want {
		return r, &ToolError{Tool: "dd", Command: argv, ExitCode: res.exitCode,
			Reason: fmt.Sprintf("copied %d bytes, not the %d asked for (short file or device full?)", r.Bytes, want), Tail: tailOf(res)}
	}
	return r, nil
}

// dropFromCache writes back and evicts the file's pages, so the next read
// comes from the device. POSIX_FADV_DONTNEED only drops clean pages, hence
// the fdatasync first. Only this file is affected, not the host's cache.
func dropFromCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise(DONTNEED) %s: %w", path, err)
	}
	return nil
}

func (d *DD) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, t := range d.tests {
		var argv []string
		switch t {
		case "read":
			if err := dropFromCache(d.file); err != nil {
				return nil, fmt.Errorf("dd: %w", err)
			}
			argv = d.readArgv()
		case "read_cached":
			argv = d.readArgv()
			// Load the file into the cache first (a no-op after "read").
			if _, err := d.run(ctx, argv); err != nil {
				return nil, err
			}
		default:
			argv = d.writeArgv(t)
		}
		recordCommand(env, argv)
		r, err := d.run(ctx, argv)
		if err != nil {
			return nil, err
		}
		out[t+".mb_per_sec"] = r.MBPerSec()
	}
	return out, nil
}

func (d *DD) Teardown(*probe.Env) error { return removeDir(&d.dir) }
