// Package golden compares rendered output with reviewed golden files
// (testdata/**/*.golden), the way benchstat's testdata/*.stdout and
// node_exporter's end-to-end output are kept: a change in any output shows
// up as a diff to review. Run the tests with -update to rewrite the files
// with the current output, then review the diff with git:
//
//	go test ./internal/report -update
//	UPDATE_GOLDEN=1 go test ./...    # every package: test binaries without
//	                                 # golden files reject an -update flag
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Check compares got with the golden file at path (rewriting it with
// -update).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update || os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test -update' to create it, then review it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (if the change is intended, run 'go test -update' and review the diff):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff shows the first lines where want and got differ, with two lines of
// context.
func Diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	for k := max(0, i-2); k < i; k++ {
		fmt.Fprintf(&b, "  %4d   %s\n", k+1, wl[k])
	}
	for k := i; k < min(len(wl), i+5); k++ {
		fmt.Fprintf(&b, "  %4d - %s\n", k+1, wl[k])
	}
	for k := i; k < min(len(gl), i+5); k++ {
		fmt.Fprintf(&b, "  %4d + %s\n", k+1, gl[k])
	}
	return b.String()
}
