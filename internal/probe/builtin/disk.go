package builtin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
	"golang.org/x/sys/unix"
)

// Disk measures a filesystem's sequential bandwidth, 4 KiB random IOPS at
// queue depth 1 and fsync latency, in the harness's scratch directory.
type Disk struct {
	cfg     diskConfig
	path    string // data file
	syncPth string // fsync file
	fd      int    // data file, valid while buf != nil
	syncFd  int    // fsync file
	open    []int  // every fd to close in Teardown
	direct  bool
	buf     *region
	lat     []float64
	iter    uint64
}

type diskConfig struct {
	size     int64
	block    int64
	duration time.Duration
	direct   string
	tests    []string
}

// diskTests are the steps of one iteration, in the order they run.
var diskTests = []string{"seq_write", "seq_read", "rand_read", "rand_write", "fsync"}

// dataSteps use the data file; only fsync uses the fsync file. Setup lays
// out only the files the selected steps use: tests=fsync (a database log
// disk) must not first write a 256 MiB data file, nor need room for it.
var dataSteps = []string{"seq_write", "seq_read", "rand_read", "rand_write"}

// diskOpen opens the data file; tests replace it to play a filesystem
// that refuses O_DIRECT.
var diskOpen = unix.Open

const (
	diskRandBlock = 4096
	diskSyncSpan  = 4 << 20 // the fsync test cycles through this much of its file
	diskMaxSyncs  = 1 << 18
	diskHeadroom  = 64 << 20 // left free, so the test does not fill the filesystem
	tmpfsMagic    = 0x01021994
)

func (*Disk) Name() string { return "disk" }

func (*Disk) Doc() string {
	return "Filesystem I/O in the scratch directory (--dir): a file of `size` written and read sequentially in " +
		"`block` units (MB/s, 1 MB = 1e6 bytes; the write includes the closing fdatasync), 4 KiB random reads " +
		"and writes at queue depth 1 for `duration` each (IOPS, like fio --ioengine=psync --iodepth=1), and " +
		"4 KiB write+fsync latency (µs, mean and p99, like fio --fsync=1). With O_DIRECT (direct=auto uses it when " +
		"the filesystem accepts it) every read comes from the device, not the page cache. Without it the " +
		"sequential read follows an fdatasync and POSIX_FADV_DONTNEED of the file, random writes include a " +
		"final fdatasync, and random reads may hit the page cache; a note records the fallback. On tmpfs the " +
		"numbers are memory speed. `tests` picks steps (e.g. tests=fsync for a database log disk)."
}

func (*Disk) Defaults(quick bool) probe.Params {
	p := probe.Params{"size": "256MiB", "block": "1MiB", "duration": "300ms", "direct": "auto", "tests": strings.Join(diskTests, ",")}
	if quick {
		p["size"], p["duration"] = "64MiB", "100ms"
	}
	return p
}

func (d *Disk) parse(p probe.Params) (diskConfig, error) {
	const name = "disk"
	var cfg diskConfig
	var err error
	if err = checkKnown(name, p, d.Defaults(false)); err != nil {
		return cfg, err
	}
	if cfg.block, err = sizeParam(name, p, "block", 1<<20, 4096, 64<<20, 4096); err != nil {
		return cfg, err
	}
	if cfg.size, err = sizeParam(name, p, "size", 256<<20, 1<<20, 1<<40, 4096); err != nil {
		return cfg, err
	}
	if cfg.size%cfg.block != 0 {
		return cfg, paramError(name, "size", "%s is not a multiple of block %s", fmtBytes(cfg.size), fmtBytes(cfg.block))
	}
	if cfg.duration, err = durationParam(name, p, "duration", 300*time.Millisecond, time.Millisecond, time.Minute); err != nil {
		return cfg, err
	}
	if cfg.direct, err = choiceParam(name, p, "direct", "auto", []string{"auto", "true", "false"}); err != nil {
		return cfg, err
	}
	// "fsync," or " " is a typo, not a request for every step (which an
	// empty tests= is, like any empty parameter).
	if v := p["tests"]; v != "" && slices.ContainsFunc(strings.Split(v, ","), func(f string) bool { return strings.TrimSpace(f) == "" }) {
		return cfg, paramError(name, "tests", "%q has an empty entry (list steps separated by commas, e.g. tests=seq_read,fsync)", v)
	}
	if cfg.tests, err = choicesParam(name, p, "tests", diskTests, diskTests); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// uses reports whether the configured steps include any of steps.
func (c diskConfig) uses(steps ...string) bool {
	return slices.ContainsFunc(c.tests, func(t string) bool { return slices.Contains(steps, t) })
}

// needs is the free space Setup requires: the files the selected steps
// use, and headroom so the test does not fill the filesystem.
func (c diskConfig) needs() (total int64, parts []string) {
	if c.uses(dataSteps...) {
		total += c.size
		parts = append(parts, "size "+fmtBytes(c.size))
	}
	if c.uses("fsync") {
		total += diskSyncSpan
		parts = append(parts, fmtBytes(diskSyncSpan)+" fsync file")
	}
	parts = append(parts, fmtBytes(diskHeadroom)+" headroom")
	return total + diskHeadroom, parts
}

func (d *Disk) Metrics(p probe.Params) ([]run.Metric, error) {
	cfg, err := d.parse(p)
	if err != nil {
		return nil, err
	}
	all := map[string][]run.Metric{
		"seq_write":  {{Name: "seq_write", Unit: "MB/s", Better: run.Higher}},
		"seq_read":   {{Name: "seq_read", Unit: "MB/s", Better: run.Higher}},
		"rand_read":  {{Name: "rand_read", Unit: "IOPS", Better: run.Higher}},
		"rand_write": {{Name: "rand_write", Unit: "IOPS", Better: run.Higher}},
		"fsync":      {{Name: "fsync", Unit: "µs", Better: run.Lower}, {Name: "fsync.p99", Unit: "µs", Better: run.Lower}},
	}
	var ms []run.Metric
	for _, t := range cfg.tests {
		ms = append(ms, all[t]...)
	}
	return ms, nil
}

func (d *Disk) Setup(_ context.Context, env *probe.Env) (err error) {
	cfg, err := d.parse(env.Params)
	if err != nil {
		return err
	}
	d.cfg = cfg
	if env.Dir == "" {
		return errors.New("disk: no scratch directory (give --dir on a filesystem of the disk to test)")
	}
	var st unix.Statfs_t
	if err := unix.Statfs(env.Dir, &st); err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	need, parts := cfg.needs()
	if free := st.Bavail * uint64(st.Bsize); free < uint64(need) {
		return fmt.Errorf("disk: %s has %s free, the test needs %s (%s); lower size= or pick another --dir",
			env.Dir, fmtMiB(free), fmtMiB(uint64(need)), strings.Join(parts, " + "))
	}
	if int64(st.Type) == tmpfsMagic {
		env.Notes = append(env.Notes, "disk: "+env.Dir+" is tmpfs, so this measures memory, not a disk")
	}
	if d.buf, err = mapAnon(cfg.block, false, ""); err != nil {
		return fmt.Errorf("disk: %w", err)
	}
	// Incompressible content, so thin-provisioned or deduplicating storage
	// cannot shortcut the writes.
	rng := rand.New(rand.NewPCG(7, 7))
	w := words(d.buf.buf)
	for i := range w {
		w[i] = rng.Uint64()
	}
	d.fd, d.syncFd = -1, -1
	if cfg.uses(dataSteps...) {
		d.path = filepath.Join(env.Dir, "perflab-disk.dat")
		if err := d.openData(env); err != nil {
			return err
		}
	}
	if cfg.uses("fsync") {
		d.syncPth = filepath.Join(env.Dir, "perflab-fsync.dat")
		if d.syncFd, err = unix.Open(d.syncPth, unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o600); err != nil {
			return fmt.Errorf("disk: %w", err)
		}
		d.open = append(d.open, d.syncFd)
		for off := int64(0); off < diskSyncSpan; off += diskRandBlock {
			if _, err := unix.Pwrite(d.syncFd, d.buf.buf[:diskRandBlock], off); err != nil {
				return fmt.Errorf("disk: lay out %s: %w", d.syncPth, err)
			}
		}
		if err := unix.Fsync(d.syncFd); err != nil {
			return fmt.Errorf("disk: fsync: %w", err)
		}
	}
	d.lat = make([]float64, 0, diskMaxSyncs)
	return nil
}

// openData creates the data file and lays it out fully, so random I/O hits
// allocated blocks; it settles whether O_DIRECT works here.
func (d *Disk) openData(env *probe.Env) error {
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC | unix.O_CLOEXEC
	d.direct = d.cfg.direct != "false"
	var err error
	if d.direct {
		d.fd, err = diskOpen(d.path, flags|unix.O_DIRECT, 0o600)
		if err == nil {
			// Some filesystems accept the flag but fail the first I/O.
			if _, err = unix.Pwrite(d.fd, d.buf.buf, 0); err != nil {
				unix.Close(d.fd)
			}
		}
		if err != nil {
			if d.cfg.direct == "true" || !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("disk: O_DIRECT on %s: %w", env.Dir, err)
			}
			d.direct = false
			env.Notes = append(env.Notes, "disk: O_DIRECT is not supported on "+env.Dir+
				" (EINVAL); buffered I/O with fdatasync and POSIX_FADV_DONTNEED instead, random reads may hit the page cache")
		}
	}
	if !d.direct {
		if d.fd, err = unix.Open(d.path, flags, 0o600); err != nil {
			return fmt.Errorf("disk: %w", err)
		}
	}
	d.open = append(d.open, d.fd)
	if _, err := d.seqWrite(nil); err != nil {
		return fmt.Errorf("disk: lay out %s: %w", d.path, err)
	}
	return nil
}

func (d *Disk) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	if d.buf == nil || len(d.open) == 0 {
		return nil, fmt.Errorf("disk: Iterate before Setup")
	}
	stop, release := stopFlag(ctx)
	defer release()
	d.iter++
	rng := rand.New(rand.NewPCG(d.iter, 11))
	out := map[string]float64{}
	steps := map[string]func() (float64, error){
		"seq_write":  func() (float64, error) { return d.seqWrite(stop.Load) },
		"seq_read":   func() (float64, error) { return d.seqRead(stop.Load) },
		"rand_read":  func() (float64, error) { return d.randIO(false, rng, stop.Load) },
		"rand_write": func() (float64, error) { return d.randIO(true, rng, stop.Load) },
		"fsync":      func() (float64, error) { return d.fsyncLatency(stop.Load) },
	}
	for _, name := range d.cfg.tests {
		fn := steps[name]
		var v float64
		// Locked but not pinned: completions are delivered on the CPU of
		// the device's interrupt, and a thread pinned elsewhere would add a
		// cross-CPU wake-up to every I/O (20 µs on a VM whose idle vCPUs
		// halt) that fio, left to the scheduler, does not pay.
		res := runPinned([]int{-1}, 1, func(int) workerResult {
			var err error
			v, err = fn()
			return workerResult{err: err}
		})
		if stop.Load() {
			return nil, ctx.Err()
		}
		if res[0].err != nil {
			return nil, fmt.Errorf("disk: %s: %w", name, res[0].err)
		}
		out[name] = v
	}
	if _, ok := out["fsync"]; ok {
		slices.Sort(d.lat)
		out["fsync.p99"] = percentile(d.lat, 0.99) / 1e3
	}
	return out, nil
}

// seqWrite rewrites the whole file and syncs it; MB/s.
func (d *Disk) seqWrite(stopped func() bool) (float64, error) {
	start := time.Now()
	for off := int64(0); off < d.cfg.size; off += d.cfg.block {
		if _, err := unix.Pwrite(d.fd, d.buf.buf, off); err != nil {
			return 0, err
		}
		if stopped != nil && stopped() {
			return 0, nil
		}
	}
	if err := unix.Fdatasync(d.fd); err != nil {
		return 0, fmt.Errorf("fdatasync: %w", err)
	}
	return float64(d.cfg.size) / time.Since(start).Seconds() / 1e6, nil
}

// seqRead reads the whole file; MB/s.
func (d *Disk) seqRead(stopped func() bool) (float64, error) {
	if !d.direct {
		// Clean pages of the file leave the cache, so the read goes to disk.
		if err := unix.Fdatasync(d.fd); err != nil {
			return 0, fmt.Errorf("fdatasync: %w", err)
		}
		if err := unix.Fadvise(d.fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return 0, fmt.Errorf("fadvise: %w", err)
		}
	}
	start := time.Now()
	for off := int64(0); off < d.cfg.size; off += d.cfg.block {
		if _, err := unix.Pread(d.fd, d.buf.buf, off); err != nil {
			return 0, err
		}
		if stopped() {
			return 0, nil
		}
	}
	return float64(d.cfg.size) / time.Since(start).Seconds() / 1e6, nil
}

// randIO does 4 KiB reads or writes at random aligned offsets; IOPS.
func (d *Disk) randIO(write bool, rng *rand.Rand, stopped func() bool) (float64, error) {
	blocks := d.cfg.size / diskRandBlock
	b := d.buf.buf[:diskRandBlock]
	var ops float64
	start := time.Now()
	for {
		off := rng.Int64N(blocks) * diskRandBlock
		var err error
		if write {
			_, err = unix.Pwrite(d.fd, b, off)
		} else {
			_, err = unix.Pread(d.fd, b, off)
		}
		if err != nil {
			return 0, err
		}
		ops++
		if time.Since(start) >= d.cfg.duration || stopped() {
			break
		}
	}
	if write && !d.direct {
		if err := unix.Fdatasync(d.fd); err != nil {
			return 0, fmt.Errorf("fdatasync: %w", err)
		}
	}
	return ops / time.Since(start).Seconds(), nil
}

// fsyncLatency writes 4 KiB sequentially through its file, each write
// followed by fsync; mean µs, with each latency kept for the p99.
func (d *Disk) fsyncLatency(stopped func() bool) (float64, error) {
	d.lat = d.lat[:0]
	b := d.buf.buf[:diskRandBlock]
	var total time.Duration
	var n int
	off := int64(0)
	for total < d.cfg.duration && !stopped() {
		t0 := time.Now()
		if _, err := unix.Pwrite(d.syncFd, b, off); err != nil {
			return 0, err
		}
		if err := unix.Fsync(d.syncFd); err != nil {
			return 0, fmt.Errorf("fsync: %w", err)
		}
		el := time.Since(t0)
		total += el
		n++
		if len(d.lat) < cap(d.lat) {
			d.lat = append(d.lat, float64(el.Nanoseconds()))
		}
		off = (off + diskRandBlock) % diskSyncSpan
	}
	if n == 0 {
		return 0, nil
	}
	return float64(total.Nanoseconds()) / float64(n) / 1e3, nil
}

// fmtMiB prints a free-space figure, which is rarely a round size.
func fmtMiB(n uint64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func (d *Disk) Teardown(*probe.Env) error {
	var errs []error
	for _, fd := range d.open {
		errs = append(errs, unix.Close(fd))
	}
	d.open = nil
	for _, p := range []string{d.path, d.syncPth} {
		if p != "" {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	d.path, d.syncPth = "", ""
	errs = append(errs, d.buf.unmap())
	d.buf = nil
	d.lat = nil
	return errors.Join(errs...)
}
