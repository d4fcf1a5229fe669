package own

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/run"
)

func benchOnce(t *testing.T, p probe.Probe, params probe.Params, runs, warmup int) (*run.Run, error) {
	t.Helper()
	item := bench.Item{Probe: p, Params: p.Defaults(false).Merge(params)}
	rs, err := bench.Run(context.Background(), []bench.Item{item}, bench.Options{
		MinRuns: runs, MaxRuns: runs, Warmup: warmup, NoNoiseCheck: true, Dir: t.TempDir(),
	})
	if len(rs) != 1 {
		t.Fatalf("%d runs, err %v", len(rs), err)
	}
	return rs[0], err
}

// The stored metric is the number the command printed, sample by sample.
func TestExecScoreIsThePrintedNumber(t *testing.T) {
	log := filepath.Join(t.TempDir(), "printed")
	script := `v=$(od -An -N2 -tu2 /dev/urandom | tr -d ' '); echo "$v" >> ` + log + `; echo "{\"score\": $v.5}"`
	p, err := AdHoc("exec:" + script)
	if err != nil {
		t.Fatal(err)
	}
	r, err := benchOnce(t, p, probe.Params{"shell": "true", "metric": "score,points,higher,json:score"}, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	lines := strings.Fields(string(b))
	// Setup's check run, two warm-ups, then the measured samples.
	if len(lines) != 1+2+8 {
		t.Fatalf("command ran %d times, want 11", len(lines))
	}
	got := r.Values("score")
	for i, v := range got {
		want, _ := strconv.ParseFloat(lines[3+i], 64)
		if v != want+0.5 {
			t.Errorf("sample %d: stored %v, printed %v.5", i, v, want)
		}
	}
	if len(got) != 8 || r.Params["metric"] != "score,points,higher,json:score" || r.Params["shell"] != "true" {
		t.Errorf("%d samples; params %v", len(got), r.Params)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "shell start-up") {
		t.Errorf("no note on the shell-spawn correction: %q", r.Notes)
	}
}

// A metric that never matches is one clear usage error, before any sample.
func TestExecNeverMatchingMetricIsUsage(t *testing.T) {
	p, _ := AdHoc("exec:echo hello")
	r, err := benchOnce(t, p, probe.Params{"metric": `tps,tx/s,higher,regex:([0-9.]+) per sec`}, 6, 1)
	if clierr.Code(err) != clierr.Usage {
		t.Fatalf("err %v (code %d), want a usage error", err, clierr.Code(err))
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "metric tps") || !strings.Contains(msg, "matched nothing") || !strings.Contains(msg, "hello") {
		t.Errorf("message %q: want one line naming the metric, the problem and what was printed", msg)
	}
	if len(r.Samples) != 0 {
		t.Errorf("%d samples stored", len(r.Samples))
	}
}

func TestExecFailuresSayWhy(t *testing.T) {
	for _, c := range []struct {
		name   string
		params probe.Params
		want   string
	}{
		{"exec:sh -c 'echo first >&2; echo boom >&2; exit 3'", nil, "exited with status 3: boom"},
		{"exec:sleep 5", probe.Params{"timeout": "200ms"}, "timed out after 200ms"},
		{"exec:/no/such/binary", nil, "not found"},
	} {
		p, _ := AdHoc(c.name)
		r, err := benchOnce(t, p, c.params, 6, 0)
		if err == nil || !strings.Contains(r.Error, c.want) {
			t.Errorf("%s: run error %q (%v), want %q", c.name, r.Error, err, c.want)
		}
	}
	if _, err := AdHoc("exec:a | b"); err != nil {
		t.Fatal(err) // the name is fine; the parameters decide
	}
	p, _ := AdHoc("exec:a | b")
	if _, err := p.Metrics(p.Defaults(false)); err == nil || !strings.Contains(err.Error(), "shell=true") {
		t.Errorf("a pipe without shell=true: %v", err)
	}
}

func TestExecPrepareAndCleanup(t *testing.T) {
	dir := t.TempDir()
	p, _ := AdHoc("exec:true")
	_, err := benchOnce(t, p, probe.Params{"shell": "true",
		"prepare": "echo p >> " + dir + "/log", "cleanup": "echo c >> " + dir + "/log"}, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(dir + "/log")
	if got := strings.Join(strings.Fields(string(b)), ""); got != "ppppppp"+"c" {
		t.Errorf("prepare before each of 1 warm-up and 6 samples, cleanup once: got %q", got)
	}
}
