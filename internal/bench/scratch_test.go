package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
	"golang.org/x/sys/unix"
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

// writeDir makes dir with an owner file (none when owner is "") and a
// data file, as a killed perflab leaves it.
func writeDir(t *testing.T, dir, owner string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if owner != "" {
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "perflab-disk.dat"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// The sweep must never delete through a symlink: not a perflab-* symlink
// to another tree whose owner file names a dead process, and not a
// symlink inside a dead owner's directory.
func TestSweepDoesNotFollowSymlinks(t *testing.T) {
	root := t.TempDir()
	parent := filepath.Join(root, "dir")
	dead := strconv.Itoa(deadPid(t)) + " 12345\n"
	target := writeDir(t, filepath.Join(root, "elsewhere"), dead)
	precious := filepath.Join(target, "precious")
	if err := os.WriteFile(precious, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(parent, "perflab-x")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	// A dead owner's real directory holding a symlink to the target: the
	// directory goes, the link with it, the target stays.
	real := writeDir(t, filepath.Join(parent, "perflab-disk-real"), dead)
	if err := os.Symlink(target, filepath.Join(real, "into-target")); err != nil {
		t.Fatal(err)
	}
	// An owner file that is itself a symlink to a dead owner elsewhere.
	linkedOwner := writeDir(t, filepath.Join(parent, "perflab-disk-linkedowner"), "")
	if err := os.Symlink(filepath.Join(target, ownerFile), filepath.Join(linkedOwner, ownerFile)); err != nil {
		t.Fatal(err)
	}

	removed := sweepScratch(parent)

	for _, p := range []string{target, precious, filepath.Join(target, ownerFile), filepath.Join(target, "perflab-disk.dat"), link, linkedOwner} {
		if !exists(t, p) {
			t.Errorf("%s was removed", p)
		}
	}
	if exists(t, real) {
		t.Errorf("%s: owner is dead, directory kept", real)
	}
	if len(removed) != 1 || !strings.Contains(removed[0], "perflab-disk-real") {
		t.Errorf("removed %v, want only perflab-disk-real", removed)
	}
}

// --dir is a path, not a pattern: "run[1]" must not sweep a sibling
// "run1", and a malformed pattern must not stop the sweep.
func TestSweepTakesDirLiterally(t *testing.T) {
	root := t.TempDir()
	dead := strconv.Itoa(deadPid(t)) + " 1\n"
	victim := writeDir(t, filepath.Join(root, "run1", "perflab-disk-a"), dead)
	star := writeDir(t, filepath.Join(root, "other", "perflab-disk-b"), dead)
	for _, parent := range []string{filepath.Join(root, "run[1]"), filepath.Join(root, "*"), filepath.Join(root, "bad[")} {
		mine := writeDir(t, filepath.Join(parent, "perflab-disk-c"), dead)
		sweepScratch(parent)
		if exists(t, mine) {
			t.Errorf("--dir %s: its own dead scratch directory was kept", parent)
		}
	}
	for _, p := range []string{victim, star} {
		if !exists(t, p) {
			t.Errorf("%s, outside --dir, was removed", p)
		}
	}
}

// An owner file that is a directory, a FIFO or a huge file is not ours:
// the sweep keeps the directory and does not hang or read it all.
func TestSweepOddOwnerFiles(t *testing.T) {
	parent := t.TempDir()
	dead := strconv.Itoa(deadPid(t)) + " 1\n"
	dirOwner := writeDir(t, filepath.Join(parent, "perflab-disk-dirowner"), "")
	if err := os.Mkdir(filepath.Join(dirOwner, ownerFile), 0o700); err != nil {
		t.Fatal(err)
	}
	fifo := writeDir(t, filepath.Join(parent, "perflab-disk-fifo"), "")
	if err := unix.Mkfifo(filepath.Join(fifo, ownerFile), 0o600); err != nil {
		t.Fatal(err)
	}
	big := writeDir(t, filepath.Join(parent, "perflab-disk-big"), dead+strings.Repeat(" ", ownerMax))
	empty := writeDir(t, filepath.Join(parent, "perflab-disk-empty"), "")
	if err := os.WriteFile(filepath.Join(empty, ownerFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removed := sweepScratch(parent) // a FIFO read would block here forever
	for _, d := range []string{dirOwner, fifo, big, empty} {
		if !exists(t, d) {
			t.Errorf("%s removed", d)
		}
	}
	if len(removed) != 0 {
		t.Errorf("removed %v", removed)
	}
}

// A directory another user owns is not ours to remove, even as root.
func TestSweepKeepsOtherUsersDirectories(t *testing.T) {
	testenv.RequireRoot(t)
	parent := t.TempDir()
	d := writeDir(t, filepath.Join(parent, "perflab-disk-nobody"), strconv.Itoa(deadPid(t))+" 1\n")
	if err := os.Chown(d, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	sweepScratch(parent)
	if !exists(t, d) {
		t.Error("another user's scratch directory was removed")
	}
}

// Only an owner of this boot and pid namespace is judged by its pid; an
// earlier boot of this machine is over; other hosts and namespaces stay.
func TestSweepJudgesOwnersByBootAndNamespace(t *testing.T) {
	here := host{Boot: "boot-a", PidNS: "4026531836", Machine: "m1"}
	alive := func(pid int, _ uint64) bool { return pid == 100 }
	for _, c := range []struct {
		owner string
		gone  bool
	}{
		{"200 5 boot-a 4026531836 m1", true},   // this boot and namespace, dead
		{"100 5 boot-a 4026531836 m1", false},  // this boot and namespace, running
		{"200 5 boot-a 4026532999 m1", false},  // another container's pid
		{"200 5 boot-a - m1", false},           // namespace unknown
		{"200 5 boot-old 4026531836 m1", true}, // an earlier boot of this machine
		{"100 5 boot-old 4026532999 m1", true}, // pid and namespace of that boot mean nothing now
		{"200 5 boot-b 4026531836 m2", false},  // another host on shared storage
		{"200 5 boot-b 4026531836 -", false},   // another boot of an unknown machine
		{"200 5 - - -", false},                 // written without a boot id
		{"200 5", true},                        // the earlier two-field form, dead
		{"100 5", false},                       // … running
		{"200 5 boot-a 4026531836", false},     // truncated: not an owner
	} {
		parent := t.TempDir()
		d := writeDir(t, filepath.Join(parent, "perflab-disk-x"), c.owner+"\n")
		sweep(parent, here, alive)
		if got := !exists(t, d); got != c.gone {
			t.Errorf("owner %q on %+v: removed %v, want %v", c.owner, here, got, c.gone)
		}
	}
	// Without a machine id, another boot is not provably this machine's.
	parent := t.TempDir()
	d := writeDir(t, filepath.Join(parent, "perflab-disk-x"), "200 5 boot-old 4026531836 -\n")
	sweep(parent, host{Boot: "boot-a", PidNS: "4026531836"}, alive)
	if !exists(t, d) {
		t.Error("owner of another boot removed on a host without a machine id")
	}
}

// makeScratch's owner file names this process in the full form, and the
// sweep of a live session keeps it.
func TestMakeScratchOwner(t *testing.T) {
	dir, err := makeScratch(t.TempDir(), "disk")
	if err != nil {
		t.Fatal(err)
	}
	o, err := readOwner(filepath.Join(dir, ownerFile))
	if err != nil {
		t.Fatal(err)
	}
	h := thisHost()
	if o.short || o.Pid != os.Getpid() || o.host != h || h.Boot == "" || h.PidNS == "" {
		t.Errorf("owner %+v, want this process on %+v", o, h)
	}
	if gone(o, h, ownerRuns) {
		t.Error("this process judged gone")
	}
}
