package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/testenv"
)

const foldData = "../flame/fold/testdata/"

func TestFlameFoldCLIMatchesReference(t *testing.T) {
	in := testenv.Gunzip(t, foldData+"redis-pidtid.perf.txt.gz")
	want := testenv.Gunzip(t, foldData+"expected/redis-pidtid.tid+all+addrs.folded.gz")
	code, out, stderr := runCLIWith(t, nil, bytes.NewReader(in), nil, "flame", "fold", "--tid", "--all", "--addrs")
	if code != 0 || out != string(want) {
		t.Fatalf("code %d stderr %q; output differs from the reference (%d vs %d bytes)", code, stderr, len(out), len(want))
	}
	code, _, stderr = runCLIWith(t, nil, bytes.NewReader(testenv.Gunzip(t, foldData+"mixed-events.perf.txt.gz")), nil, "flame", "fold")
	if code != 0 || !strings.Contains(stderr, `folded only "cpu-clock" samples; skipped`) {
		t.Fatalf("mixed events: code %d, stderr %q", code, stderr)
	}
}

func TestFlameFoldCLIRejectsBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		in    string
		code  int
		msg   string
		lines int
	}{
		"empty":   {"", clierr.Usage, "no samples", 1},
		"garbage": {"GET / HTTP/1.1\nHost: x\n", clierr.Usage, "not perf script output", 1},
		// Folded as far as it goes, with warnings (inferno folds it too).
		"truncated": {"a 1 [000] 1.0: 1 cpu-clock:\n\t1 f (/x)\n\t2 ma", 0, "warning: the input ends in the middle of a line", 2},
		"cut line":  {"a 1 [000] 1.0: 1 cpu-clock:\n\t1 f (/x)\n\t2 main (/x\n\n", 0, "warning: skipped 1 line that is not perf script", 1},
	} {
		code, _, stderr := runCLIWith(t, nil, strings.NewReader(c.in), nil, "flame", "fold")
		if code != c.code || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != c.lines {
			t.Errorf("%s: code %d, stderr %q", name, code, stderr)
		}
	}
}

// inferno's own odd inputs (testdata/inferno, see ORIGIN.md): fold folds
// them as inferno does and exits 0 with one warning, as its help says;
// only an input without samples exits 2.
func TestFlameFoldCLIInfernoOddInputs(t *testing.T) {
	for _, name := range []string{"weird-stack-line", "empty-line"} {
		code, out, stderr := runCLIWith(t, nil, nil, nil, "flame", "fold", foldData+"inferno/"+name+".txt")
		if code != 0 || out != "inline-counter;main 250000\n" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "warning: skipped 1 line") {
			t.Errorf("%s: code %d, stdout %q, stderr %q", name, code, out, stderr)
		}
	}
	code, out, stderr := runCLIWith(t, nil, nil, nil, "flame", "fold", foldData+"inferno/no-events.txt")
	if code != clierr.Usage || out != "" || !strings.Contains(stderr, "no samples") {
		t.Errorf("no-events: code %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, _ = runCLIWith(t, nil, nil, nil, "flame", "fold", "--help")
	if code != 0 || !strings.Contains(out, "0 stacks folded") || !strings.Contains(out, "byte-identical to inferno-collapse-perf") || strings.Contains(out, "except that the last") {
		t.Errorf("help should state the exit codes and the parity it has:\n%s", out)
	}
}

func TestFlameRenderDiffSpeedscopeCLI(t *testing.T) {
	dir := t.TempDir()
	before := filepath.Join(dir, "before.folded")
	after := filepath.Join(dir, "after.folded")
	os.WriteFile(before, []byte("java;run;ClientHandshaker.processMessage;serverHello 115\njava;run;parse 9885\n"), 0o644)
	os.WriteFile(after, []byte("java;run;ClientHandshaker.processMessage;serverHelloDone 4796\njava;run;parse 15204\n"), 0o644)

	for _, ext := range []string{"svg", "html", "speedscope.json", "folded"} {
		o := filepath.Join(dir, "g."+ext)
		if code, _, stderr := runCLIWith(t, nil, nil, nil, "flame", "render", after, "-o", o, "--title", "t"); code != 0 {
			t.Fatalf("render %s: %d %s", ext, code, stderr)
		}
		b, _ := os.ReadFile(o)
		if !bytes.Contains(b, []byte("processMessage")) {
			t.Fatalf("%s lacks the frames", ext)
		}
	}
	code, out, stderr := runCLIWith(t, nil, nil, nil, "flame", "diff", before, after, "-o", filepath.Join(dir, "d.svg"), "--top", "3")
	if code != 0 || !strings.Contains(out, "ClientHandshaker.processMessage") || !strings.Contains(out, "1.15% →  23.98%") {
		t.Fatalf("diff: code %d stderr %q\n%s", code, stderr, out)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "d.svg"))
	if !bytes.Contains(svg, []byte("Differential Flame Graph")) || !bytes.Contains(svg, []byte("rgb(255,0,0)")) {
		t.Fatal("differential SVG should title itself and colour the largest growth saturated red")
	}
	code, out, stderr = runCLIWith(t, nil, nil, nil, "flame", "diff", before, after, "--format", "folded")
	if code != 0 || !strings.HasPrefix(out, "java;run;ClientHandshaker.processMessage;serverHello 115 0\n") || !strings.Contains(stderr, "processMessage") {
		t.Fatalf("folded diff to stdout, table to stderr: %d\n%s\n%s", code, out, stderr)
	}
	if code, _, _ := runCLIWith(t, nil, nil, nil, "flame", "render", filepath.Join(dir, "missing")); code != clierr.Usage {
		t.Fatalf("missing file: %d", code)
	}
	code, out, _ = runCLIWith(t, nil, strings.NewReader("a;b 3\n"), nil, "flame", "speedscope", "--unit", "nanoseconds")
	if code != 0 || !strings.Contains(out, `"unit":"nanoseconds"`) || !strings.Contains(out, "speedscope.app/file-format-schema.json") {
		t.Fatalf("speedscope: %d %s", code, out)
	}
}
