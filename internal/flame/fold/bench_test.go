package fold

import (
	"bytes"
	"hash/maphash"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// benchInput is PERFLAB_FOLD_BENCH_FILE, or the fixtures concatenated.
func benchInput(b *testing.B) []byte {
	if p := os.Getenv("PERFLAB_FOLD_BENCH_FILE"); p != "" {
		in, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return in
	}
	var in []byte
	paths, _ := filepath.Glob("testdata/*.perf.txt.gz")
	for _, p := range paths {
		in = append(in, readFixture(b, p)...)
	}
	return in
}

// BenchmarkFold measures throughput (MB/s) on the fixtures concatenated,
// or on PERFLAB_FOLD_BENCH_FILE (bench/flame.sh passes a ~100 MB capture),
// read from a file as the CLI does (so mapped, not read).
func BenchmarkFold(b *testing.B) {
	in := benchInput(b)
	f := openWith(b, in)
	for _, threads := range []int{1, 2} {
		b.Run("threads="+strconv.Itoa(threads), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fold(f, Options{Threads: threads}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLineScanFloor measures what no folder can beat on this machine:
// threads goroutines, each over its share of the input, merely finding
// every newline ("newlines"), or also hashing every stack, the bytes
// between blank lines ("newlines+hash"). bench/flame.sh reports it beside
// the fold's own throughput, and the ratio to inferno it allows.
func BenchmarkLineScanFloor(b *testing.B) {
	in := benchInput(b)
	for _, threads := range []int{1, 2} {
		parts := splitAtLines(in, threads)
		for _, hash := range []bool{false, true} {
			name := "newlines"
			if hash {
				name += "+hash"
			}
			b.Run(name+"/threads="+strconv.Itoa(threads), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				sums := make([]uint64, threads)
				for b.Loop() {
					var wg sync.WaitGroup
					for i, p := range parts {
						wg.Add(1)
						go func() {
							defer wg.Done()
							sums[i] = scanLines(p, hash)
						}()
					}
					wg.Wait()
				}
			})
		}
	}
}

// scanLines finds every newline in p and, with hash, hashes every stack.
func scanLines(p []byte, hash bool) uint64 {
	seed := maphash.MakeSeed()
	var n uint64
	start := 0
	for i := 0; i < len(p); {
		j := bytes.IndexByte(p[i:], '\n')
		if j < 0 {
			break
		}
		if j == 0 && hash { // a blank line ends a stack
			n += maphash.Bytes(seed, p[start:i])
			start = i + 1
		}
		n++
		i += j + 1
	}
	return n
}

// splitAtLines cuts in into n parts that end at newlines.
func splitAtLines(in []byte, n int) [][]byte {
	var parts [][]byte
	for k := n; k > 1; k-- {
		cut := len(in) / k
		if i := bytes.IndexByte(in[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		parts = append(parts, in[:cut])
		in = in[cut:]
	}
	return append(parts, in)
}
