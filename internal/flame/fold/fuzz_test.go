package fold

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/perflab/perflab/internal/flame/folded"
)

// FuzzFold checks, on arbitrary input, that folding never panics, that
// cutting the input into tiny blocks for parallel workers gives exactly
// the serial result, and that the output is well-formed folded stacks.
// With PERFLAB_FUZZ_REFERENCE=1 and inferno-collapse-perf installed it also
// compares every input with the reference (slow: one process per input).
func FuzzFold(f *testing.F) {
	for _, c := range cornerCases {
		f.Add([]byte(c), uint8(0))
	}
	f.Add([]byte("a 1 [000] 1.0: 1 cpu-clock:\n\t1 f (/x)\n\na 2 1.0: 2 cpu-clock:\n\t2 g->h (/tmp/perf-2.map)\n"), uint8(0x3f))
	ref := ""
	if os.Getenv("PERFLAB_FUZZ_REFERENCE") != "" {
		ref, _ = exec.LookPath("inferno-collapse-perf")
	}
	f.Fuzz(func(t *testing.T, in []byte, flags uint8) {
		opt := Options{
			PID: flags&1 != 0, TID: flags&2 != 0, Kernel: flags&4 != 0,
			JIT: flags&8 != 0, Addrs: flags&16 != 0,
		}
		serial := foldWith(t, in, opt, 1, blockSize)
		for _, block := range []int{16, 97} {
			if par := foldWith(t, in, opt, 3, block); !bytes.Equal(serial, par) {
				t.Fatalf("parallel (block %d) differs from serial:\n%s", block, firstDiff(par, serial))
			}
		}
		// Well-formed: "frames count" lines, strictly increasing.
		prev := []byte(nil)
		for i, line := range bytes.Split(bytes.TrimSuffix(serial, []byte("\n")), []byte("\n")) {
			if len(serial) == 0 {
				break
			}
			frames, _, ok := folded.SplitLine(line)
			if !ok || (i > 0 && bytes.Compare(prev, frames) >= 0) {
				t.Fatalf("line %d malformed or out of order: %q", i+1, line)
			}
			prev = frames
		}
		if ref != "" && bytes.IndexByte(in, 0) < 0 {
			if want, err := tryInferno(ref, in, opt); err == nil && !bytes.Equal(serial, want) {
				t.Fatalf("differs from reference:\n%s\ninput %q", firstDiff(serial, want), in)
			}
		}
	})
}

func foldWith(t *testing.T, in []byte, opt Options, threads, block int) []byte {
	t.Helper()
	opt.Threads = threads
	res, err := fold(bytes.NewReader(in), opt, block)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.Profile.WriteTo(&out)
	return out.Bytes()
}
