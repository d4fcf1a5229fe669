package fold

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFoldMappedFileEqualsRead: a regular file is mapped, not read; its
// folded output, serial and parallel, is the reader's, byte for byte. A
// file already partly read, and a pipe, are read as before.
func TestFoldMappedFileEqualsRead(t *testing.T) {
	paths, _ := filepath.Glob("testdata/*.perf.txt.gz")
	if len(paths) < 2 {
		t.Fatalf("captures missing: %d", len(paths))
	}
	var in []byte
	for _, p := range paths[:2] {
		in = append(in, readFixture(t, p)...)
	}
	f := openWith(t, in)
	data, unmap, ok := mapFile(f)
	if !ok || !bytes.Equal(data, in) {
		t.Fatalf("regular file not mapped (ok=%v)", ok)
	}
	// Small blocks: each folded block's pages are released from the
	// mapping as the fold goes; what is read again must be the same.
	for _, threads := range []int{1, 2} {
		want := foldBytes(t, in, Options{Threads: threads})
		res, err := foldSource(&source{mem: data, mapped: true, block: 4096}, Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		res.Profile.WriteTo(&got)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("threads=%d, 4 KiB blocks: mapped file folds differently\n%s", threads, firstDiff(got.Bytes(), want))
		}
	}
	if !bytes.Equal(data, in) {
		t.Fatal("the mapping's bytes changed after its pages were released")
	}
	unmap()
	for _, threads := range []int{1, 2} {
		want := foldBytes(t, in, Options{Threads: threads})
		res, err := Fold(f, Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		res.Profile.WriteTo(&got)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("threads=%d: mapped file folds differently\n%s", threads, firstDiff(got.Bytes(), want))
		}
	}
	if _, err := f.Seek(10, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := mapFile(f); ok {
		t.Error("a file read past its start was mapped: its first bytes are not the input")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Close()
	if _, _, ok := mapFile(r); ok {
		t.Error("a pipe was mapped")
	}
}

// TestShrunkMappingIsAnError: reading a mapping past the end of a file
// truncated under it faults (SIGBUS); the fold returns an error saying
// so instead of crashing.
func TestShrunkMappingIsAnError(t *testing.T) {
	f := openWith(t, bytes.Repeat([]byte("x\n"), 1<<14))
	data, unmap, ok := mapFile(f)
	if !ok {
		t.Fatal("not mapped")
	}
	defer unmap()
	if err := os.Truncate(f.Name(), 0); err != nil {
		t.Fatal(err)
	}
	var sink byte
	err := guardFaults(func() { sink = data[len(data)-1] })
	if !errors.Is(err, errShrunk) {
		t.Fatalf("got %v (read %q), want errShrunk", err, sink)
	}
}

// openWith writes content to a temporary file and opens it for reading;
// it is closed when the test or benchmark ends.
func openWith(tb testing.TB, content []byte) *os.File {
	tb.Helper()
	name := filepath.Join(tb.TempDir(), "perf.txt")
	if err := os.WriteFile(name, content, 0o600); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}
