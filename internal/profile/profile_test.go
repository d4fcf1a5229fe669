package profile

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

func asUser(t *testing.T) {
	old := geteuid
	geteuid = func() int { return 1000 }
	t.Cleanup(func() { geteuid = old })
}

func tree(t *testing.T, paranoid, kptr string) hostfs.FS {
	return fixture.Tree(t, "kvm", map[string]string{
		"proc/sys/kernel/perf_event_paranoid": paranoid + "\n",
		"proc/sys/kernel/kptr_restrict":       kptr + "\n",
		"proc/self/status":                    "Name:\tperflab\nCapEff:\t0000000000000000\n",
	})
}

func TestReadinessRefusesWithTheAuditFix(t *testing.T) {
	testenv.RequireTool(t, "perf")
	asUser(t)
	_, err := CheckReadiness(tree(t, "3", "0"), Target{Command: []string{"true"}})
	if err == nil || clierr.Code(err) != clierr.Runtime {
		t.Fatalf("paranoid 3 must block an unprivileged user, got %v", err)
	}
	for _, want := range []string{"perf_event_paranoid is 3", "PERF-EVENT-PARANOID", "sysctl -w kernel.perf_event_paranoid=2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := CheckReadiness(tree(t, "2", "0"), Target{All: true}); err == nil || !strings.Contains(err.Error(), "-a") {
		t.Fatalf("system-wide needs paranoid <= 0 for users: %v", err)
	}
	r, err := CheckReadiness(tree(t, "2", "1"), Target{Command: []string{"true"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "kernel frames will be missing") || !strings.Contains(r.Notes[1], "kptr_restrict is 1") {
		t.Fatalf("notes = %q", r.Notes)
	}
}

func TestReadinessAsRoot(t *testing.T) {
	testenv.RequireTool(t, "perf")
	old := geteuid
	geteuid = func() int { return 0 }
	t.Cleanup(func() { geteuid = old })
	r, err := CheckReadiness(tree(t, "3", "2"), Target{Command: []string{"true"}})
	if err != nil {
		t.Fatalf("root is not bound by perf_event_paranoid: %v", err)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "kptr_restrict is 2") || !strings.Contains(r.Notes[0], "sysctl -w kernel.kptr_restrict=") {
		t.Fatalf("kptr_restrict=2 hides kernel symbols even from root: %q", r.Notes)
	}
	if _, err := CheckReadiness(tree(t, "2", "0"), Target{PID: 1 << 30}); clierr.Code(err) != clierr.Usage {
		t.Fatalf("a missing PID is a usage error: %v", err)
	}
	if _, err := CheckReadiness(tree(t, "2", "0"), Target{Command: []string{"/no/such/tool"}}); clierr.Code(err) != clierr.Usage {
		t.Fatalf("a missing command is a usage error: %v", err)
	}
}

func TestSummaries(t *testing.T) {
	p, _ := folded.Read(strings.NewReader("a;main;f_[k] 6\na;main;g 3\nb;g 1\n"))
	fns := HottestFunctions(p, 2)
	if fns[0].Name != "f" || fns[0].Share != 60 || fns[1].Name != "g" || fns[1].Share != 40 {
		t.Fatalf("functions = %+v", fns)
	}
	if s := HottestStacks(p, 1); s[0].Name != "a;main;f_[k]" {
		t.Fatalf("stacks = %+v", s)
	}
	if got := Abbrev("a;main;f_[k]", 100); got != "f ← main ← a" {
		t.Fatalf("abbrev = %q", got)
	}
	if got := Abbrev("a;main;f_[k]", 6); got != "f ← m…" {
		t.Fatalf("abbrev = %q", got)
	}
}

// TestRecordJIT profiles a tiny JIT that writes /tmp/perf-PID.map, as JVMs
// with perf-map-agent do, and checks that its frames are named and
// annotated: the whole perf record → perf script → fold path on this host.
func TestRecordJIT(t *testing.T) {
	testenv.Short(t)
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "perf")
	gcc := testenv.RequireTool(t, "gcc")
	bin := filepath.Join(t.TempDir(), "java") // the folder tidies Java names for comm "java"
	if out, err := exec.Command(gcc, "-O1", "-fno-omit-frame-pointer", "-o", bin, "../flame/fold/testdata/workloads/jit.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	fs, err := hostfs.New("/")
	if err != nil {
		t.Fatal(err)
	}
	r, err := CheckReadiness(fs, Target{Command: []string{bin}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Record(ctx, r, Options{Target: Target{Command: []string{bin, "1500"}}, Freq: 999, Event: "cpu-clock", Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	var jit uint64
	for _, s := range p.Fold.Profile.Stacks {
		if strings.HasPrefix(s.Frames, "java;") && strings.Contains(s.Frames, "com/example/Handshake:.processMessage_[j]") {
			jit += s.Count
		}
	}
	if jit == 0 || float64(jit) < 0.3*float64(p.Fold.Profile.Total()) {
		t.Fatalf("JIT frame not resolved through the perf map (%d of %d):\n%v", jit, p.Fold.Profile.Total(), p.Fold.Profile.Stacks)
	}
	if p.Event != "cpu-clock" || p.Fold.Stats.Event != "cpu-clock" {
		t.Fatalf("event %q folded %q", p.Event, p.Fold.Stats.Event)
	}
}

// perf's refusal is a dozen lines of advice ending with /etc/sysctl.conf;
// the one-line error must carry the line that names the problem.
func TestPerfFailureNamesTheProblem(t *testing.T) {
	paranoid := `Error:
Access to performance monitoring and observability operations is limited.
Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open
access to performance monitoring and observability operations for processes
perf_event_paranoid setting is 2:
>= 2: Disallow kernel profiling
To make the adjusted perf_event_paranoid setting permanent preserve it
in /etc/sysctl.conf (e.g. kernel.perf_event_paranoid = <setting>)
`
	err := perfFailure("perf record", nil, paranoid)
	if msg := err.Error(); !strings.Contains(msg, "Access to performance monitoring") || strings.Contains(msg, "sysctl.conf") || !strings.Contains(msg, "lower kernel.perf_event_paranoid") {
		t.Errorf("paranoid refusal: %q", msg)
	}
	if clierr.Code(err) != clierr.Runtime {
		t.Errorf("exit code %d, want %d", clierr.Code(err), clierr.Runtime)
	}
	err = perfFailure("perf record", nil, "[ perf record: Woken up 1 times ]\nfailed to mmap with 12 (Cannot allocate memory)\n")
	if msg := err.Error(); !strings.Contains(msg, "failed to mmap") {
		t.Errorf("plain failure: %q", msg)
	}
}
