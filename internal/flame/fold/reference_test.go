package fold

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// The fixtures are perf captures made on a 2-core KVM guest by
// testdata/capture.sh (a C program, C++ templates, a JIT with a perf map,
// Go, dd, fio, redis under load, two event types), each in perf's default
// format and with `-F +pid`. expected/ holds inferno-collapse-perf's output
// for each flag set.

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	return testenv.Gunzip(t, path)
}

// flagSets maps the expected-file tag to options, as capture.sh names them.
var flagSets = map[string]Options{
	"default":          {},
	"pid":              {PID: true},
	"tid":              {TID: true},
	"kernel":           {Kernel: true},
	"jit":              {JIT: true},
	"all":              {Kernel: true, JIT: true},
	"addrs":            {Addrs: true},
	"tid+all+addrs":    {TID: true, Kernel: true, JIT: true, Addrs: true},
	"event=task-clock": {EventFilter: "task-clock"},
}

func foldBytes(t testing.TB, in []byte, opt Options) []byte {
	t.Helper()
	res, err := Fold(bytes.NewReader(in), opt)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := res.Profile.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestFoldMatchesRecordedReference(t *testing.T) {
	exp, err := filepath.Glob("testdata/expected/*.folded.gz")
	if err != nil || len(exp) < 100 {
		t.Fatalf("expected outputs missing (%d found): %v", len(exp), err)
	}
	inputs := map[string][]byte{}
	for _, e := range exp {
		base := strings.TrimSuffix(filepath.Base(e), ".folded.gz")
		dot := strings.LastIndexByte(base, '.')
		name, tag := base[:dot], base[dot+1:]
		opt, ok := flagSets[tag]
		if !ok {
			t.Fatalf("%s: unknown flag tag %q", e, tag)
		}
		in, ok := inputs[name]
		if !ok {
			in = readFixture(t, "testdata/"+name+".perf.txt.gz")
			inputs[name] = in
		}
		want := readFixture(t, e)
		if len(want) == 0 && tag != "event=task-clock" {
			t.Fatalf("%s: empty expected output", e)
		}
		opt.Threads = 1
		if got := foldBytes(t, in, opt); !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from the reference\n%s", base, firstDiff(got, want))
		}
		// Parallel, with blocks small enough that every fixture is cut
		// into many: the result must not depend on where the cuts fall.
		if tag == "default" || tag == "tid+all+addrs" {
			opt.Threads = 2
			res, err := fold(bytes.NewReader(in), opt, 48<<10)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			res.Profile.WriteTo(&got)
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s threads=2: output differs from the reference\n%s", base, firstDiff(got.Bytes(), want))
			}
		}
	}
}

// TestFoldMatchesInferno runs the reference itself on every fixture and on
// the hand-written corner cases, so a new fixture or a changed reference
// is caught even before expected/ is regenerated.
func TestFoldMatchesInferno(t *testing.T) {
	ref := requireInferno(t)
	inputs, _ := filepath.Glob("testdata/*.perf.txt.gz")
	cases := map[string][]byte{}
	for _, p := range inputs {
		cases[filepath.Base(p)] = readFixture(t, p)
	}
	for name, c := range cornerCases {
		cases["corner/"+name] = []byte(c)
	}
	for name, in := range cases {
		for tag, opt := range flagSets {
			if !strings.HasPrefix(name, "corner/") && tag != "default" && tag != "tid+all+addrs" {
				continue // the recorded outputs cover the other flag sets
			}
			want := runInferno(t, ref, in, opt)
			if got := foldBytes(t, in, opt); !bytes.Equal(got, want) {
				t.Errorf("%s %s: differs from inferno-collapse-perf\n%s", name, tag, firstDiff(got, want))
			}
		}
	}
}

func requireInferno(t testing.TB) string {
	return testenv.RequireTool(t, "inferno-collapse-perf")
}

// runInferno runs the reference folder single-threaded with opt's flags.
func runInferno(t testing.TB, ref string, in []byte, opt Options) []byte {
	t.Helper()
	out, err := tryInferno(ref, in, opt)
	if err != nil {
		t.Fatalf("reference failed: %v", err)
	}
	return out
}

// tryInferno is runInferno for inputs on which the reference may crash
// (it panics on some garbage, e.g. a lone " " line).
func tryInferno(ref string, in []byte, opt Options) ([]byte, error) {
	args := []string{"-q", "-n", "1"}
	for _, f := range []struct {
		on   bool
		flag string
	}{{opt.PID, "--pid"}, {opt.TID, "--tid"}, {opt.Kernel, "--kernel"}, {opt.JIT, "--jit"}, {opt.Addrs, "--addrs"}} {
		if f.on {
			args = append(args, f.flag)
		}
	}
	if opt.EventFilter != "" {
		args = append(args, "--event-filter", opt.EventFilter)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ref, args...)
	cmd.Stdin = bytes.NewReader(in)
	return cmd.Output()
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  got:  " + a + "\n  want: " + b
		}
	}
	return "(identical lines, different bytes)"
}

// TestFoldMatchesInfernoTestData folds inferno's own collapse-perf test
// inputs (testdata/inferno, see ORIGIN.md) — C++ std::function and lambda
// names, Go, Java inlining, Rust names, single-line stacks, jitdump frames,
// a versioned vmlinux — and compares with the results inferno's tests
// expect; the odd inputs fold to their one good stack.
func TestFoldMatchesInfernoTestData(t *testing.T) {
	for name, opt := range map[string]Options{
		"cpp-stacks-std-function": {}, "go-stacks": {}, "java-inline": {}, "single-event": {},
		"single-line-stacks": {}, "sourcepawn-jitdump": {JIT: true}, "versioned-vmlinux": {Kernel: true},
		"no-events": {}, "weird-stack-line": {}, "empty-line": {},
	} {
		in, err := os.ReadFile("testdata/inferno/" + name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		suffix := ""
		switch {
		case opt.JIT:
			suffix = "-jit"
		case opt.Kernel:
			suffix = "-kernel"
		}
		want, err := os.ReadFile("testdata/inferno/results/" + name + "-collapsed" + suffix + ".txt")
		if os.IsNotExist(err) {
			want, err = []byte("inline-counter;main 250000\n"), nil // inferno's tests check only its warning
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			opt.Threads = threads
			if got := foldBytes(t, in, opt); !bytes.Equal(got, want) {
				t.Errorf("%s threads=%d: differs from inferno's expected result\n%s", name, threads, firstDiff(got, want))
			}
		}
	}
}
