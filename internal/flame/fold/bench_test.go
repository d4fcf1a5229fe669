package fold

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkFold measures throughput (MB/s) on the fixtures concatenated,
// or on PERFLAB_FOLD_BENCH_FILE (bench/flame.sh passes a ~100 MB capture).
func BenchmarkFold(b *testing.B) {
	var in []byte
	if p := os.Getenv("PERFLAB_FOLD_BENCH_FILE"); p != "" {
		var err error
		if in, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	} else {
		paths, _ := filepath.Glob("testdata/*.perf.txt.gz")
		for _, p := range paths {
			in = append(in, readFixture(b, p)...)
		}
	}
	for _, threads := range []int{1, 2} {
		b.Run("threads="+strconv.Itoa(threads), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fold(bytes.NewReader(in), Options{Threads: threads}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
