package remote

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The host side of the build cache, run with this machine's sh: a build
// whose checksum matches is renamed into ~/.cache/perflab/bin and then
// found by cachedScript; a corrupted copy leaves nothing; a file of
// another size, or a link, is not taken for the build; only the three
// newest builds are kept.
func TestBuildCacheScripts(t *testing.T) {
	home := t.TempDir()
	sh := func(script string, stdin []byte) (string, error) {
		c := exec.Command("sh", "-c", script)
		c.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		c.Stdin = bytes.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		if err != nil {
			err = fmt.Errorf("%v: %s", err, errb.String())
		}
		return strings.TrimSpace(out.String()), err
	}
	build := func(i int) ([]byte, string) {
		b := bytes.Repeat([]byte(fmt.Sprintf("build %d\n", i)), 1000)
		s := sha256.Sum256(b)
		return b, hex.EncodeToString(s[:])
	}
	dir := filepath.Join(home, ".cache/perflab/bin")
	b, sum := build(0)
	if out, _ := sh(cachedScript(sum, int64(len(b))), nil); out != "" {
		t.Fatalf("empty cache answered %q", out)
	}
	if _, err := sh(fmt.Sprintf(cacheScript, len(b), sum), append([]byte("x"), b[1:]...)); err == nil {
		t.Error("a corrupted copy was accepted")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed copy left %v", left)
	}
	out, err := sh(fmt.Sprintf(cacheScript, len(b), sum), b)
	if err != nil || out != filepath.Join(dir, "perflab-"+sum) {
		t.Fatalf("copy: %q, %v", out, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache directory %v, %v: want mode 0700", fi, err)
	}
	if got, _ := sh(cachedScript(sum, int64(len(b))), nil); got != "cached "+out {
		t.Errorf("cached build not found: %q", got)
	}
	if got, _ := sh(cachedScript(sum, int64(len(b))+1), nil); got != "" {
		t.Errorf("a build of another size was taken: %q", got)
	}
	_, sum2 := build(99)
	if err := os.Symlink(out, filepath.Join(dir, "perflab-"+sum2)); err != nil {
		t.Fatal(err)
	}
	if got, _ := sh(cachedScript(sum2, int64(len(b))), nil); got != "" {
		t.Errorf("a link was taken for a build: %q", got)
	}
	os.Remove(filepath.Join(dir, "perflab-"+sum2))
	for i := 1; i <= 4; i++ {
		bi, si := build(i)
		if _, err := sh(fmt.Sprintf(cacheScript, len(bi), si), bi); err != nil {
			t.Fatal(err)
		}
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "perflab-*"))
	if len(kept) != 3 {
		t.Errorf("kept %d builds, want the 3 newest: %v", len(kept), kept)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the oldest build %s was kept", out)
	}
}
