package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The ttar escapes: a trailing EOF drops the newline, NULLBYTE is a NUL,
// and \EOF / \NULLBYTE are the literal words.
func TestExtract(t *testing.T) {
	archive := strings.Join([]string{
		"# Archive created by ttar -c -f x.ttar fixtures",
		"Directory: fixtures/proc",
		"Mode: 755",
		"# ttar - - - - - -",
		"Path: fixtures/proc/cmdline",
		"Lines: 1",
		"sleepNULLBYTE100NULLBYTEEOF",
		"Mode: 444",
		"# ttar - - - - - -",
		"Path: fixtures/proc/words",
		"Lines: 2",
		`a \EOF and \NULLBYTE`,
		"last",
		"Mode: 644",
		"# ttar - - - - - -",
		"Path: fixtures/proc/self",
		"SymlinkTo: 26231",
		"# ttar - - - - - -",
		"Path: ../escape",
		"Lines: 1",
		"x",
		"Mode: 644",
	}, "\n") + "\n"
	dst := t.TempDir()
	n, err := extract(strings.NewReader(archive), dst, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("%d entries written, want 4 (the escaping path is skipped)", n)
	}
	for file, want := range map[string]string{"proc/cmdline": "sleep\x00100\x00", "proc/words": "a EOF and NULLBYTE\nlast\n"} {
		got, err := os.ReadFile(filepath.Join(dst, file))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", file, got, err, want)
		}
	}
	if l, err := os.Readlink(filepath.Join(dst, "proc/self")); err != nil || l != "26231" {
		t.Errorf("proc/self link %q, %v", l, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "escape")); err == nil {
		t.Error("a ../ path was written outside the target")
	}
	if _, err := extract(strings.NewReader("Path: a\nLines: 3\nx\n"), t.TempDir(), 0, nil); err == nil {
		t.Error("a truncated archive extracted without error")
	}
}
