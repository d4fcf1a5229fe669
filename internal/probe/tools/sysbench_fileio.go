package tools

import (
	"context"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// SysbenchFileIO is `sysbench fileio`: files prepared once in Setup, then
// each test mode for a short time per iteration.
type SysbenchFileIO struct {
	sb    sysbench
	modes []string
	size  int64
	files int
	block int64
	flags string
	dur   time.Duration
	dir   string
}

func newSysbenchFileIO() *SysbenchFileIO { return &SysbenchFileIO{} }

func (*SysbenchFileIO) Name() string { return "sysbench.fileio" }

func (*SysbenchFileIO) Doc() string {
	return "sysbench's file I/O test in the scratch directory (--dir): `sysbench fileio --file-total-size=S " +
		"--file-num=N prepare` once, then `sysbench fileio --file-test-mode=M --file-block-size=B --time=T run` for " +
		"each mode — seqwr, seqrd, rndrd, rndwr (and rndrw, seqrewr on request) — reporting reads/s, writes/s (IOPS) " +
		"and MiB/s as sysbench prints them: the seed-004 file I/O rows. Without extra_flags=direct the reads are " +
		"served by the page cache when the files fit in memory, as in sysbench's defaults."
}

var fileioModes = []string{"seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"}

func (*SysbenchFileIO) Defaults(quick bool) probe.Params {
	p := probe.Params{"mode": "seqwr,seqrd,rndrd,rndwr", "size": "256MiB", "files": "4", "block_size": "16KiB",
		"extra_flags": "", "duration": "1s"}
	if quick {
		p["size"] = "64MiB"
	}
	return p
}

func (f *SysbenchFileIO) parse(p probe.Params) error {
	const n = "sysbench.fileio"
	if err := checkKnown(n, p, f.Defaults(false)); err != nil {
		return err
	}
	var err error
	if f.modes, err = listParam(n, p, "mode", "seqwr,seqrd,rndrd,rndwr", fileioModes); err != nil {
		return err
	}
	if f.size, err = sizeParam(n, p, "size", 256<<20, 1<<20, 1<<40); err != nil {
		return err
	}
	if f.files, err = intParam(n, p, "files", 4, 1, 1024); err != nil {
		return err
	}
	if f.block, err = sizeParam(n, p, "block_size", 16<<10, 512, 64<<20); err != nil {
		return err
	}
	switch f.flags = p["extra_flags"]; f.flags {
	case "", "direct", "sync", "dsync":
	default:
		return paramError(n, "extra_flags", "%q is not one of direct, sync, dsync (or empty)", f.flags)
	}
	f.dur, err = runDuration(n, p, time.Second)
	return err
}

// fileioMetrics are the metrics of one mode: what it reads, writes or both.
func fileioMetrics(mode string) []run.Metric {
	reads := []run.Metric{
		{Name: mode + ".reads_per_sec", Unit: "IOPS", Better: run.Higher},
		{Name: mode + ".read_mib_per_sec", Unit: "MiB/s", Better: run.Higher},
	}
	writes := []run.Metric{
		{Name: mode + ".writes_per_sec", Unit: "IOPS", Better: run.Higher},
		{Name: mode + ".write_mib_per_sec", Unit: "MiB/s", Better: run.Higher},
	}
	switch mode {
	case "seqrd", "rndrd":
		return reads
	case "rndrw":
		return append(reads, writes...)
	}
	return writes
}

func (f *SysbenchFileIO) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := f.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, m := range f.modes {
		ms = append(ms, fileioMetrics(m)...)
	}
	return ms, nil
}

func (f *SysbenchFileIO) Available() error { return f.sb.available(context.Background()) }

func (f *SysbenchFileIO) opts() []string {
	o := []string{"--file-total-size=" + strconv.FormatInt(f.size, 10), "--file-num=" + strconv.Itoa(f.files)}
	if f.flags != "" {
		o = append(o, "--file-extra-flags="+f.flags)
	}
	return o
}

func (f *SysbenchFileIO) Setup(ctx context.Context, env *probe.Env) error {
	if err := f.sb.setup(ctx, env, f.parse); err != nil {
		return err
	}
	var err error
	if f.dir, err = makeDir(env, "sysbench-fileio"); err != nil {
		return err
	}
	argv := f.sb.argv("fileio", 1, 0, f.opts(), "prepare")
	addNote(&env.Notes, "prepared with: "+shellJoin(argv))
	_, err = runTool(ctx, invocation{tool: "sysbench", argv: argv, dir: f.dir, timeout: 10 * time.Minute})
	return err
}

func (f *SysbenchFileIO) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	out := map[string]float64{}
	for _, mode := range f.modes {
		argv := f.sb.argv("fileio", 1, f.dur, append(f.opts(), "--file-test-mode="+mode,
			"--file-block-size="+strconv.FormatInt(f.block, 10)), "run")
		r, err := f.sb.run(ctx, env, f.dir, argv, toolTimeout(f.dur))
		if err != nil {
			return nil, err
		}
		// seqwr truncates the files and writes for the test's duration
		// only: on a disk slower than size/duration the files are left
		// short, and the next read test refuses them ("Size of file …
		// but at least … is expected"). Lay them out again.
		if mode == "seqwr" {
			argv := f.sb.argv("fileio", 1, 0, f.opts(), "prepare")
			if _, err := runTool(ctx, invocation{tool: "sysbench", argv: argv, dir: f.dir, timeout: 10 * time.Minute}); err != nil {
				return nil, err
			}
		}
		// A metric is MODE.KEY, KEY the parser's name for the value.
		for _, m := range fileioMetrics(mode) {
			key := m.Name[len(mode)+1:]
			if err := requireValues(r, argv, key); err != nil {
				return nil, err
			}
			switch key {
			case "reads_per_sec":
				out[m.Name] = r.ReadsPerSec
			case "read_mib_per_sec":
				out[m.Name] = r.ReadMiBPerSec
			case "writes_per_sec":
				out[m.Name] = r.WritesPerSec
			case "write_mib_per_sec":
				out[m.Name] = r.WriteMiBPerSec
			}
		}
	}
	return out, nil
}

// Teardown removes the test files (the harness removes the scratch
// directory too; this keeps the space short-lived on a small disk).
func (f *SysbenchFileIO) Teardown(*probe.Env) error { return removeDir(&f.dir) }
