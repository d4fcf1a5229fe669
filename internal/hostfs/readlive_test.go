package hostfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// readLive must return what os.ReadFile returns, for files smaller than,
// equal to and larger than its scratch buffer, empty files, and errors of
// the same kind for a missing file and a directory.
func TestReadLiveLikeReadFile(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{0, 1, 4095, 16 << 10, 16<<10 + 1, 3*(16<<10) + 7, 1 << 20}
	var paths []string
	for _, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		p := filepath.Join(dir, "f"+string(rune('a'+len(paths))))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, "/proc/self/status", "/proc/cpuinfo", "/proc/self/cmdline")
	for _, p := range paths {
		want, werr := os.ReadFile(p)
		got, gerr := readLive(p)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) && filepath.Dir(p) == dir {
			t.Errorf("%s: readLive %d bytes, %v; os.ReadFile %d bytes, %v", p, len(got), gerr, len(want), werr)
		}
		if gerr == nil && got == nil {
			t.Errorf("%s: nil slice for a file that was read", p)
		}
	}
	if _, err := readLive(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := readLive(dir); !errors.As(err, &pe) || pe.Op != "read" {
		t.Errorf("directory: %v, want a read *fs.PathError as os.ReadFile gives", err)
	}
}

// BenchmarkReadLive against os.ReadFile on a small procfs file: the cost
// a snapshot pays hundreds of times.
func BenchmarkReadLive(b *testing.B) {
	for _, c := range []struct {
		name string
		f    func(string) ([]byte, error)
	}{{"readLive", readLive}, {"os.ReadFile", os.ReadFile}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.f("/proc/loadavg"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
