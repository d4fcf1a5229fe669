package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// deadPid is the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestSweepScratch(t *testing.T) {
	parent := t.TempDir()
	mine, err := makeScratch(parent, "disk")
	if err != nil {
		t.Fatal(err)
	}
	myStart, err := startTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		d := filepath.Join(parent, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, "perflab-disk.dat"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := mk("perflab-disk-dead", strconv.Itoa(deadPid(t))+" 12345\n")
	reused := mk("perflab-disk-reused", strconv.Itoa(os.Getpid())+" "+strconv.Itoa(int(myStart)+1)+"\n") // our pid, another start time
	noOwner := mk("perflab-disk-noowner", "")
	garbage := mk("perflab-disk-garbage", "not a pid\n")
	other := mk("someone-else", strconv.Itoa(deadPid(t))+" 1\n")

	removed := sweepScratch(parent)
	gone := func(d string) bool { _, err := os.Stat(d); return os.IsNotExist(err) }
	for _, d := range []string{dead, reused} {
		if !gone(d) {
			t.Errorf("%s: owner is gone, directory kept", d)
		}
	}
	for _, d := range []string{mine, noOwner, garbage, other} {
		if gone(d) {
			t.Errorf("%s removed, but its owner runs or it is not ours to judge", d)
		}
	}
	if len(removed) != 2 || !strings.Contains(strings.Join(removed, " "), "perflab-disk-dead (pid ") {
		t.Errorf("removed %v", removed)
	}
}
