package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

// Fio runs fio's four classic jobs — sequential read and write with large
// blocks, random read and write with small ones — one after the other
// (stonewall) in one fio process, on a file laid out in Setup.
type Fio struct {
	path, version string
	jobs          []string
	size          int64
	bsSeq, bsRand int64
	engine        string
	direct        int
	iodepth       int
	dur           time.Duration
	dir           string
}

var fioJobs = []string{"read", "write", "randread", "randwrite"}

func (*Fio) Name() string { return "fio" }

func (*Fio) Doc() string {
	return "fio on one file in the scratch directory (--dir): `fio --output-format=json --ioengine=E --direct=D " +
		"--size=S --time_based --runtime=T --name=read --rw=read --bs=1M --stonewall …` with the jobs read, write " +
		"(bs_seq) and randread, randwrite (bs_rand), run in sequence; per job IOPS, MiB/s and the 99th percentile " +
		"completion latency from fio's JSON. direct=1 (the default) bypasses the page cache, so this measures the " +
		"device and filesystem, not memory."
}

func (*Fio) Defaults(quick bool) probe.Params {
	p := probe.Params{"jobs": strings.Join(fioJobs, ","), "size": "256MiB", "bs_seq": "1MiB", "bs_rand": "4KiB",
		"ioengine": "psync", "direct": "1", "iodepth": "1", "duration": "1s"}
	if quick {
		p["size"] = "64MiB"
	}
	return p
}

func (f *Fio) parse(p probe.Params) error {
	const n = "fio"
	if err := checkKnown(n, p, f.Defaults(false)); err != nil {
		return err
	}
	var err error
	if f.jobs, err = listParam(n, p, "jobs", strings.Join(fioJobs, ","), fioJobs); err != nil {
		return err
	}
	if f.size, err = sizeParam(n, p, "size", 256<<20, 1<<20, 1<<40); err != nil {
		return err
	}
	if f.bsSeq, err = sizeParam(n, p, "bs_seq", 1<<20, 512, 64<<20); err != nil {
		return err
	}
	if f.bsRand, err = sizeParam(n, p, "bs_rand", 4<<10, 512, 64<<20); err != nil {
		return err
	}
	f.engine = p["ioengine"]
	if f.engine == "" {
		f.engine = "psync"
	}
	switch f.engine {
	case "psync", "sync", "libaio", "io_uring", "posixaio", "mmap":
	default:
		return paramError(n, "ioengine", "%q is not one of psync, sync, libaio, io_uring, posixaio, mmap", f.engine)
	}
	if f.direct, err = intParam(n, p, "direct", 1, 0, 1); err != nil {
		return err
	}
	if f.iodepth, err = intParam(n, p, "iodepth", 1, 1, 4096); err != nil {
		return err
	}
	f.dur, err = runDuration(n, p, time.Second)
	return err
}

func (f *Fio) Metrics(p probe.Params) ([]run.Metric, error) {
	if err := f.parse(p); err != nil {
		return nil, err
	}
	var ms []run.Metric
	for _, j := range f.jobs {
		ms = append(ms,
			run.Metric{Name: j + ".iops", Unit: "IOPS", Better: run.Higher},
			run.Metric{Name: j + ".mib_per_sec", Unit: "MiB/s", Better: run.Higher},
			run.Metric{Name: j + ".clat_p99", Unit: "µs", Better: run.Lower})
	}
	return ms, nil
}

func (f *Fio) Available() error {
	// JSON output appeared in fio 2.0.10; percentiles in it in 2.1.
	path, v, err := findTool(context.Background(), "fio", "2.1", "older releases have no JSON output with percentiles")
	if err != nil {
		return err
	}
	f.path, f.version = path, v
	return nil
}

func (f *Fio) common() []string {
	return []string{"--output-format=json", "--directory=" + f.dir, "--filename=perflab.fio",
		"--size=" + strconv.FormatInt(f.size, 10), "--ioengine=" + f.engine, "--direct=" + strconv.Itoa(f.direct)}
}

func (f *Fio) Setup(ctx context.Context, env *probe.Env) error {
	if err := f.parse(env.Params); err != nil {
		return err
	}
	if err := f.Available(); err != nil {
		return err
	}
	env.ToolVersion = f.version
	var err error
	if f.dir, err = makeDir(env, "fio"); err != nil {
		return err
	}
	// Lay the file out with real data: reading never-written extents
	// measures nothing but the filesystem's zero fill.
	argv := append([]string{f.path}, f.common()...)
	argv = append(argv, "--name=layout", "--rw=write", "--bs=1M", "--end_fsync=1")
	addNote(&env.Notes, "laid out with: "+shellJoin(argv))
	res, err := runTool(ctx, invocation{tool: "fio", argv: argv, dir: f.dir, timeout: 10 * time.Minute})
	if err != nil {
		return err
	}
	return fioJobErrors(res, argv, nil)
}

// fioJobErrors turns a job's error code into a clear failure.
func fioJobErrors(res result, argv []string, r *FioResult) error {
	if r == nil {
		var err error
		if r, err = ParseFio(res.stdout); err != nil {
			return &ToolError{Tool: "fio", Command: argv, ExitCode: res.exitCode, Reason: err.Error(), Tail: tailOf(res)}
		}
	}
	for _, j := range r.Jobs {
		if j.Error != 0 {
			hint := ""
			if j.Error == 22 {
				hint = " (EINVAL: the filesystem may not support O_DIRECT; try --param fio:direct=0)"
			}
			return &ToolError{Tool: "fio", Command: argv, ExitCode: res.exitCode,
				Reason: fmt.Sprintf("job %s failed with error %d%s", j.Name, j.Error, hint), Tail: tail(res.stderr, 3)}
		}
	}
	return nil
}

func (f *Fio) Iterate(ctx context.Context, env *probe.Env) (map[string]float64, error) {
	argv := append([]string{f.path}, f.common()...)
	argv = append(argv, "--time_based", "--runtime="+secondsArg(f.dur), "--iodepth="+strconv.Itoa(f.iodepth))
	for _, j := range f.jobs {
		bs := f.bsSeq
		if strings.HasPrefix(j, "rand") {
			bs = f.bsRand
		}
		argv = append(argv, "--name="+j, "--rw="+j, "--bs="+strconv.FormatInt(bs, 10), "--stonewall")
	}
	recordCommand(env, argv)
	res, err := runTool(ctx, invocation{tool: "fio", argv: argv, dir: f.dir, timeout: toolTimeout(time.Duration(len(f.jobs)) * f.dur)})
	if err != nil {
		return nil, err
	}
	r, err := ParseFio(res.stdout)
	if err != nil {
		return nil, &ToolError{Tool: "fio", Command: argv, ExitCode: res.exitCode, Reason: err.Error(), Tail: tailOf(res)}
	}
	if err := fioJobErrors(res, argv, r); err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, name := range f.jobs {
		j, ok := r.Job(name)
		if !ok {
			return nil, &ToolError{Tool: "fio", Command: argv, Reason: "no result for job " + name}
		}
		d := j.Read
		if strings.HasSuffix(name, "write") {
			d = j.Write
		}
		if d.Ops == 0 {
			return nil, &ToolError{Tool: "fio", Command: argv, Reason: "job " + name + " completed no I/O"}
		}
		if !d.HasP99 {
			return nil, &ToolError{Tool: "fio", Command: argv, Reason: "job " + name + " has no completion-latency percentiles"}
		}
		out[name+".iops"] = d.IOPS
		out[name+".mib_per_sec"] = d.MiBPerSec
		out[name+".clat_p99"] = d.ClatP99Us
	}
	return out, nil
}

func (f *Fio) Teardown(*probe.Env) error { return removeDir(&f.dir) }
