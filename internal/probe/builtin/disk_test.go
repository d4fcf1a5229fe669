package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/testenv"
	"golang.org/x/sys/unix"
)

// Setup lays out only the files the selected steps use, and a read step
// without the write step reads the file Setup laid out, in full.
func TestDiskLaysOutOnlyWhatTestsUse(t *testing.T) {
	for _, c := range []struct {
		tests          string
		data, syncFile bool
	}{
		{"fsync", false, true},
		{"seq_read", true, false},
		{"rand_read,rand_write", true, false},
		{"seq_read,fsync", true, true},
	} {
		d := &Disk{}
		env := newEnv(t, d, tiny["disk"].Merge(probe.Params{"tests": c.tests}))
		before := openFDs(t)
		if err := d.Setup(context.Background(), env); err != nil {
			t.Fatalf("tests=%s: %v", c.tests, err)
		}
		data, dataErr := os.Stat(filepath.Join(env.Dir, "perflab-disk.dat"))
		_, syncErr := os.Stat(filepath.Join(env.Dir, "perflab-fsync.dat"))
		if (dataErr == nil) != c.data || (syncErr == nil) != c.syncFile {
			t.Errorf("tests=%s: data file %v, fsync file %v; want %v, %v", c.tests, dataErr == nil, syncErr == nil, c.data, c.syncFile)
		}
		if c.data && data.Size() != d.cfg.size {
			t.Errorf("tests=%s: data file of %d bytes, want size %d laid out", c.tests, data.Size(), d.cfg.size)
		}
		vals, err := d.Iterate(context.Background(), env)
		if err != nil {
			t.Fatalf("tests=%s: %v", c.tests, err)
		}
		for _, step := range strings.Split(c.tests, ",") {
			if vals[step] <= 0 {
				t.Errorf("tests=%s: %s = %v", c.tests, step, vals[step])
			}
		}
		if err := d.Teardown(env); err != nil {
			t.Fatal(err)
		}
		assertNoLeaks(t, before, env.Dir)
	}
}

// The free-space refusal states what the test needs, headroom included,
// and counts only the files the selected steps use.
func TestDiskFreeSpace(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := st.Bavail * uint64(st.Bsize)
	if free >= 1<<40 || free < 128<<20 {
		testenv.Unavailable(t, "%s has %d bytes free; the test needs between 128 MiB and 1 TiB", dir, free)
	}
	d := &Disk{}
	env := &probe.Env{Params: probe.Params{"size": "1024GiB"}, Dir: dir}
	err := d.Setup(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "the test needs 1024.1 GiB (size 1024GiB + 4MiB fsync file + 64MiB headroom); lower size=") {
		t.Errorf("1 TiB test: %v", err)
	}
	if err := d.Teardown(env); err != nil {
		t.Fatal(err)
	}
	// A 1 TiB size is no obstacle when no step uses the data file.
	env = &probe.Env{Params: probe.Params{"size": "1024GiB", "tests": "fsync", "duration": "5ms"}, Dir: dir}
	if err := d.Setup(context.Background(), env); err != nil {
		t.Errorf("tests=fsync with size=1024GiB: %v", err)
	}
	if err := d.Teardown(env); err != nil {
		t.Fatal(err)
	}
}

// An empty entry in tests= is a typo, refused with the fix; an empty
// tests= is the default, every step.
func TestDiskTestsEmptyEntries(t *testing.T) {
	d := &Disk{}
	for _, v := range []string{"fsync,", ",seq_read", "fsync,,seq_read", " ", "fsync, "} {
		_, err := d.Metrics(probe.Params{"tests": v})
		if err == nil || !strings.Contains(err.Error(), "has an empty entry (list steps separated by commas") {
			t.Errorf("tests=%q: %v", v, err)
		}
	}
	for v, want := range map[string]int{"": 6, " fsync , seq_read ": 3, "fsync,fsync": 2} {
		ms, err := d.Metrics(probe.Params{"tests": v})
		if err != nil || len(ms) != want {
			t.Errorf("tests=%q: %d metrics, %v; want %d", v, len(ms), err, want)
		}
	}
}
