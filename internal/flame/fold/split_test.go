package fold

import (
	"bytes"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParallelEqualsSerialOnRandomSplits is the property the parallel
// folder rests on: wherever the input is cut into blocks, however many
// workers take them and however the reader delivers the bytes, the result
// is the serial one. Each run draws new cuts (the seed is logged, and
// PERFLAB_FOLD_SEED replays one) over the real captures, inferno's test
// inputs and the corner cases, with random flag sets.
func TestParallelEqualsSerialOnRandomSplits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PERFLAB_FOLD_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (PERFLAB_FOLD_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))

	inputs := map[string][]byte{}
	gz, _ := filepath.Glob("testdata/*.perf.txt.gz")
	for _, p := range gz {
		inputs[filepath.Base(p)] = readFixture(t, p)
	}
	txt, _ := filepath.Glob("testdata/inferno/*.txt")
	for _, p := range txt {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs["inferno/"+filepath.Base(p)] = b
	}
	inputs["corners"] = cornerInput()
	if len(gz) < 10 || len(txt) < 5 {
		t.Fatalf("inputs missing: %d captures, %d inferno inputs", len(gz), len(txt))
	}

	// The inputs take their draws in the order of their names: ranging
	// over the map gave each run its own assignment of draws to inputs, so
	// PERFLAB_FOLD_SEED did not replay a failure.
	// The reader's draws come from a generator of its own per case: how
	// many reads fold makes (each one draw) depends on the workers'
	// progress, so sharing rng moved every later case's cuts with the
	// scheduling.
	for ci, name := range slices.Sorted(maps.Keys(inputs)) {
		in := inputs[name]
		for rep := range 2 {
			flags := rng.Uint32()
			opt := Options{
				PID: flags&1 != 0, TID: flags&2 != 0, Kernel: flags&4 != 0,
				JIT: flags&8 != 0, Addrs: flags&16 != 0,
			}
			serial := foldWith(t, in, opt, 1, blockSize)
			block := 4<<10 + rng.IntN(60<<10)
			if len(in) < 64<<10 && rng.IntN(2) == 0 {
				// Many tiny blocks, on small inputs only: a block shorter
				// than a sample is refilled byte by byte (quadratic).
				block = 1 + rng.IntN(256)
			}
			opt.Threads = 2 + rng.IntN(3)
			chop := rand.New(rand.NewPCG(seed, 1<<32|uint64(2*ci+rep)))
			res, err := fold(&choppyReader{data: in, rng: chop}, opt, block)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			res.Profile.WriteTo(&got)
			if !bytes.Equal(got.Bytes(), serial) {
				t.Fatalf("%s %+v block %d: parallel differs from serial (seed %d)\n%s", name, opt, block, seed, firstDiff(got.Bytes(), serial))
			}
			// The same cuts over the input in memory (a mapped file).
			if res, err = foldMem(in, opt, block); err != nil {
				t.Fatal(err)
			}
			got.Reset()
			res.Profile.WriteTo(&got)
			if !bytes.Equal(got.Bytes(), serial) {
				t.Fatalf("%s %+v block %d: parallel in memory differs from serial (seed %d)\n%s", name, opt, block, seed, firstDiff(got.Bytes(), serial))
			}
		}
	}
}

// cornerInput is every corner case, joined in the order of their names:
// joined in the map's order, the input (which case follows which) changed
// from run to run.
func cornerInput() []byte {
	var corners []string
	for _, name := range slices.Sorted(maps.Keys(cornerCases)) {
		corners = append(corners, cornerCases[name])
	}
	return []byte(strings.Join(corners, "\n"))
}

// choppyReader delivers its data in reads of random length.
type choppyReader struct {
	data []byte
	rng  *rand.Rand
}

func (r *choppyReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), 1+r.rng.IntN(8<<10))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// TestSharedFramesKeepTheJavaTidy: a Java sample and a native one with
// the same frame lines, alternating, fold differently (Java names lose
// their "L"), however the line cache and the shared outer frames reuse
// what was cleaned before.
func TestSharedFramesKeepTheJavaTidy(t *testing.T) {
	var in strings.Builder
	for i := range 6 {
		comm := "java"
		if i%2 == 1 {
			comm = "native"
		}
		in.WriteString(comm + " 100 1.0: 1 cpu-clock:\n" +
			"\t    7f01 Lfoo/Bar;::leaf+0x1 (/tmp/perf-100.map)\n" +
			"\t    7f02 Lfoo/Bar;::root+0x2 (/tmp/perf-100.map)\n\n")
	}
	want := "java;foo/Bar:::root;foo/Bar:::leaf 3\nnative;Lfoo/Bar:::root;Lfoo/Bar:::leaf 3\n"
	for _, threads := range []int{1, 2} {
		if got := foldWith(t, []byte(in.String()), Options{}, threads, 64); string(got) != want {
			t.Errorf("threads=%d: got\n%s\nwant\n%s", threads, got, want)
		}
	}
}

// A block of one byte (and two, three) is the smallest the reader takes:
// every line is longer than the block, so each fill must grow the buffer
// past the carried line. With one byte it once handed the same bytes back
// for ever (the growth test's block/2 was 0), a hang the random-splits test
// met once in ~500 runs; here it is drawn every time, serial and parallel.
func TestOneByteBlocksFold(t *testing.T) {
	in := cornerInput()
	want := foldWith(t, in, Options{}, 1, blockSize)
	for _, block := range []int{1, 2, 3} {
		for _, threads := range []int{1, 2} {
			if got := foldWith(t, in, Options{}, threads, block); !bytes.Equal(got, want) {
				t.Errorf("block %d, %d threads: differs from the default block\n%s", block, threads, firstDiff(got, want))
			}
		}
	}
}
