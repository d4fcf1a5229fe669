package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
)

func mountAt(s *Snapshot, mp string) *Mount {
	for i := range s.Mounts {
		if s.Mounts[i].MountPoint == mp {
			return &s.Mounts[i]
		}
	}
	return nil
}

func TestMountsMetal(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectMounts)
	data := mountAt(s, "/data")
	if data == nil {
		t.Fatalf("/data missing: %+v", s.Mounts)
	}
	wantEq(t, "/data", *data, Mount{
		Device: "/dev/nvme0n1p1", MountPoint: "/data", FSType: "xfs",
		Options: []string{"rw", "noatime", "attr2", "inode64", "logbsize=32k", "logbufs=8", "noquota"},
	})
	wantEq(t, "/ options", mountAt(s, "/").Options, []string{"rw", "relatime", "errors=remount-ro"})
	if mountAt(s, "/dev/hugepages") == nil {
		t.Error("hugetlbfs mount dropped; where huge pages live matters")
	}
	for _, m := range s.Mounts {
		if pseudoFS[m.FSType] {
			t.Errorf("pseudo filesystem %s at %s listed", m.FSType, m.MountPoint)
		}
	}
}

func TestMountsOfPID(t *testing.T) {
	t.Parallel()
	line := "99 1 0:50 / /srv rw,relatime - ext4 /dev/sdb1 rw\n"
	fs := tree(t, "metal", map[string]string{"/proc/4243/mountinfo": line})
	s := runAreas(t, fs, Options{PID: 4243}, collectMounts)
	wantEq(t, "mounts of pid 4243", len(s.Mounts), 1)
	wantEq(t, "mount point", s.Mounts[0].MountPoint, "/srv")

	s = runAreas(t, tree(t, "metal", map[string]string{"/proc/4243/mountinfo": fixture.Delete}), Options{PID: 4243}, collectMounts)
	wantMissing(t, s, "mounts", "/proc/4243/mountinfo")
}

func TestMountsCorrupt(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", map[string]string{"/proc/4242/mountinfo": "not a mountinfo line\n"}), Options{}, collectMounts)
	wantMissing(t, s, "mounts", "")
}

func TestMountOptions(t *testing.T) {
	got := mountOptions(map[string]string{"rw": "", "noatime": ""}, map[string]string{"rw": "", "discard": "", "commit": "30"})
	wantEq(t, "options", got, []string{"rw", "noatime", "commit=30", "discard"})
	wantEq(t, "empty", mountOptions(nil, nil), []string(nil))
}

// FuzzMountinfo runs arbitrary mountinfo text through procfs and the
// option flattening: no panic, and every option word is non-empty and
// appears once per mount.
func FuzzMountinfo(f *testing.F) {
	real, _ := os.ReadFile(filepath.Join(fixture.Dir("metal"), "proc", "4242", "mountinfo"))
	f.Add(string(real))
	f.Add("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n")
	f.Add("1 2 3:4 / / rw,,=x - t s ,,a=b=c,\n")
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc", "7"), 0o755); err != nil {
		f.Fatal(err)
	}
	fs, err := hostfs.New(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if err := os.WriteFile(filepath.Join(dir, "proc", "7", "mountinfo"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s := runAreas(t, fs, Options{PID: 7}, collectMounts)
		for _, m := range s.Mounts {
			seen := map[string]bool{}
			for _, o := range m.Options {
				k, _, _ := strings.Cut(o, "=")
				if k == "" || seen[k] {
					t.Fatalf("mount %q options %q: empty or repeated key %q", m.MountPoint, m.Options, k)
				}
				seen[k] = true
			}
		}
	})
}
