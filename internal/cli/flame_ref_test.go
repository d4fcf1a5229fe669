package cli

import (
	"os"
	"slices"
	"strings"
	"testing"
)

const diffData = "../flame/diff/testdata/inferno/"

func sortedLines(s string) []string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	slices.Sort(l)
	return l
}

// flame diff --normalize and --strip-hex give what inferno-diff-folded
// gives (its recorded outputs; difffolded.pl -n/-s agree on these inputs),
// and the table's totals are the recorded ones, not the normalized ones.
func TestFlameDiffCLIMatchesInferno(t *testing.T) {
	for flag, res := range map[string]string{"--normalize": "normalize", "--strip-hex": "strip_hex", "": "default"} {
		args := []string{"flame", "diff", diffData + "before.txt", diffData + "after.txt", "--format", "folded"}
		if flag != "" {
			args = append(args, flag)
		}
		code, out, stderr := runCLIWith(t, nil, nil, nil, args...)
		want, err := os.ReadFile(diffData + "results/" + res + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		if code != 0 || !slices.Equal(sortedLines(out), sortedLines(string(want))) {
			t.Errorf("diff %s: code %d, stderr %q\n%s", flag, code, stderr, out)
		}
		if !strings.Contains(stderr, "(65 before, 80 after)") {
			t.Errorf("diff %s: the table should give the recorded totals: %q", flag, stderr)
		}
	}
}

// One malformed line or a fractional count no longer rejects a whole
// input: diff and render skip the line with one warning per input (count
// and first line number), as inferno and flamegraph.pl do, and keep
// fractional counts, as flamegraph.pl and difffolded.pl do.
func TestFlameDiffRenderSkipBadLinesKeepFractions(t *testing.T) {
	code, out, stderr := runCLIWith(t, nil, nil, nil, "flame", "diff", diffData+"bad_before.txt", diffData+"after.txt", "--format", "folded")
	if code != 0 || strings.Count(stderr, "warning") != 1 ||
		!strings.Contains(stderr, "bad_before.txt: skipped 1 line that is not folded stacks") || !strings.Contains(stderr, "line 3") {
		t.Fatalf("bad line: code %d, stderr %q", code, stderr)
	}
	if !slices.Contains(sortedLines(out), "dd;[unknown];read;system_call_[k];__fdget_pos_[k] 0 15") {
		t.Fatalf("the skipped line's stack should count 0 before, as in inferno:\n%s", out)
	}
	code, out, stderr = runCLIWith(t, nil, nil, nil, "flame", "diff", diffData+"before_fractionals.txt", diffData+"after.txt", "--format", "folded")
	lines := sortedLines(out)
	if code != 0 || !slices.Contains(lines, "dd;[unknown];read 14.234398 13") || !slices.Contains(lines, "dd;[unknown];read;system_call_[k];__fdget_pos_[k] 11.98 15") {
		t.Fatalf("fractional counts: code %d, stderr %q\n%s", code, stderr, out)
	}
	in := "a;b 1.5\nGET / HTTP/1.1\na;c 2\nHost: x\n"
	code, out, stderr = runCLIWith(t, nil, strings.NewReader(in), nil, "flame", "render", "--format", "svg", "--countname", "ms")
	if code != 0 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "skipped 2 lines that are not folded stacks") ||
		!strings.Contains(stderr, `line 2: "GET / HTTP/1.1"`) {
		t.Fatalf("render: code %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "b (1.5 ms, 42.86%)") || !strings.Contains(out, "all (3.5 ms, 100.00%)") {
		t.Fatalf("render should keep the fractional count and say ms:\n%s", out)
	}
	if code, _, stderr := runCLIWith(t, nil, strings.NewReader("GET / HTTP/1.1\n"), nil, "flame", "render"); code != 2 || !strings.Contains(stderr, "input is not folded stacks") {
		t.Fatalf("no stacks at all is bad input: code %d, %q", code, stderr)
	}
}

// Off-CPU graphs from the CLI: --colors io and --countname us reach the
// SVG (issue 16: perflab profile --off-cpu renders through this path).
func TestFlameRenderOffCPUCLI(t *testing.T) {
	in := "app;read;schedule_[k] 1500\napp;main;nanosleep 20000\n"
	code, out, stderr := runCLIWith(t, nil, strings.NewReader(in), nil, "flame", "render", "--format", "svg", "--colors", "io", "--countname", "us", "--title", "Off-CPU Time")
	if code != 0 || !strings.Contains(out, "nanosleep (20,000 us, 93.02%)") || !strings.Contains(out, `stop-color="#e0e0ff"`) || !strings.Contains(out, "Off-CPU Time") {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLIWith(t, nil, strings.NewReader(in), nil, "flame", "render", "--colors", "offcpu"); code != 2 || !strings.Contains(stderr, "io") {
		t.Fatalf("unknown palette: code %d, %q", code, stderr)
	}
}
