package testenv

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// buildMagic are the first bytes of build outputs: ELF executables and
// objects, static archives, PE and Mach-O binaries.
var buildMagic = [][]byte{
	[]byte("\x7fELF"),
	[]byte("!<arch>\n"),
	[]byte("MZ"),
	{0xcf, 0xfa, 0xed, 0xfe}, {0xce, 0xfa, 0xed, 0xfe}, {0xca, 0xfe, 0xba, 0xbe},
}

// buildSuffixes name build outputs whatever their contents.
var buildSuffixes = []string{".o", ".a", ".so", ".exe", ".test", ".out", ".prof"}

// committedObject: the eBPF objects bpf2go generates are committed (the
// build needs no clang), and scripts/test checks they are not stale.
func committedObject(name string) bool {
	ok, _ := path.Match("internal/bpf/*_bpfel.o", name)
	return ok
}

// TestNoBuildOutputCommitted: `git ls-files` holds no binary or other build
// output (a 4.8 MB gendocs binary was once committed at the root), except
// the eBPF objects.
func TestNoBuildOutputCommitted(t *testing.T) {
	git := RequireTool(t, "git")
	root := filepath.Join("..", "..")
	out, err := exec.Command(git, "-C", root, "ls-files", "-z").Output()
	if err != nil {
		Unavailable(t, "not a git checkout: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: not this repository?", len(files))
	}
	for _, name := range files {
		if committedObject(name) {
			continue
		}
		for _, s := range buildSuffixes {
			if strings.HasSuffix(name, s) {
				t.Errorf("%s: build output is committed (remove it with git rm --cached and let .gitignore cover it)", name)
			}
		}
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, a symlink of a fixture tree
		}
		head, err := readHead(filepath.Join(root, name), 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range buildMagic {
			if !bytes.HasPrefix(head, m) || (string(m) == "MZ" && !isPE(filepath.Join(root, name))) {
				continue
			}
			t.Errorf("%s: a committed binary (starts %q); remove it with git rm --cached and let .gitignore cover it", name, head[:len(m)])
		}
	}
}

func readHead(name string, n int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:k], err
}

// isPE: "MZ" starts text files too; a PE image has "PE\0\0" at the offset
// stored at 0x3c.
func isPE(name string) bool {
	b, err := readHead(name, 0x40)
	if err != nil || len(b) < 0x40 {
		return false
	}
	off := int(b[0x3c]) | int(b[0x3d])<<8 | int(b[0x3e])<<16 | int(b[0x3f])<<24
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	sig := make([]byte, 4)
	if _, err := f.ReadAt(sig, int64(off)); err != nil {
		return false
	}
	return string(sig) == "PE\x00\x00"
}

func TestCommittedObjectPattern(t *testing.T) {
	for name, want := range map[string]bool{
		"internal/bpf/offcpu_bpfel.o": true,
		"internal/bpf/offcpu_bpfeb.o": false,
		"gendocs":                     false,
		"internal/bpf/c/x.o":          false,
	} {
		if got := committedObject(name); got != want {
			t.Errorf("committedObject(%q) = %v, want %v", name, got, want)
		}
	}
}
