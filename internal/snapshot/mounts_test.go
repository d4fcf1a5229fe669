package snapshot

import (
	"fmt"
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

// Defect 5, on the third-party trees. procfs's own fixture has a double
// space ("1 1 0:5 /  /root rw,nosuid shared:8 - rootfs rootfs rw"), which
// splitting on single spaces turned into an empty mount point; node_exporter's
// has kubelet mount points with \040 and \011 escapes.
func TestMountinfoThirdParty(t *testing.T) {
	s := runAreas(t, tree(t, "procfs", nil), Options{}, collectMounts)
	root := mountAt(s, "/root")
	if root == nil {
		t.Fatalf("procfs tree: no mount at /root in %+v", s.Mounts)
	}
	wantEq(t, "/root", *root, Mount{Device: "rootfs", MountPoint: "/root", FSType: "rootfs", Options: []string{"rw", "nosuid"}})

	s = runAreas(t, tree(t, "node_exporter", nil), Options{PID: 1}, collectMounts)
	const dir = "/var/lib/kubelet/plugins/kubernetes.io/vsphere-volume/mounts/[vsanDatastore]"
	const vol = "bafb9e5a-8856-7e6c-699c-801844e77a4a/kubernetes-dynamic-pvc-3eba5bba-48a3-11e8-89ab-005056b92113.vmdk"
	for _, mp := range []string{dir + " " + vol, dir + "\t" + vol} {
		if m := mountAt(s, mp); m == nil || m.Device != "/dev/sda" || m.FSType != "ext4" {
			t.Errorf("node_exporter tree: mount %q not decoded: %+v", mp, m)
		}
	}
}

func TestParseMountInfoLine(t *testing.T) {
	for _, c := range []struct {
		line                        string
		root, mp, fstype, src, opts string
		optional                    map[string]string
	}{
		// An empty source is printed as two spaces after the fs type.
		{line: "40 25 0:35 / /mnt/a\\040b\\134c rw,relatime shared:5 master:1 - tmpfs  rw,size=10k",
			root: "/", mp: `/mnt/a b\c`, fstype: "tmpfs", src: "", opts: "size=10k",
			optional: map[string]string{"shared": "5", "master": "1"}},
		{line: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
			root: "/mnt1", mp: "/mnt2", fstype: "ext3", src: "/dev/root", opts: "errors=continue",
			optional: map[string]string{"master": "1"}},
		{line: "1 0 0:1 / /new\\012line rw - fuse.sshfs me@host:/a\\040b rw,x=a=b",
			root: "/", mp: "/new\nline", fstype: "fuse.sshfs", src: "me@host:/a b", opts: "x=a=b",
			optional: map[string]string{}},
	} {
		m, err := parseMountInfoLine(c.line)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		k, v, _ := strings.Cut(c.opts, "=")
		if m.Root != c.root || m.MountPoint != c.mp || m.FSType != c.fstype || m.Source != c.src || m.SuperOptions[k] != v {
			t.Errorf("%q: got root %q mp %q type %q src %q super %v", c.line, m.Root, m.MountPoint, m.FSType, m.Source, m.SuperOptions)
		}
		wantEq(t, "optional fields", m.OptionalFields, c.optional)
	}
	for _, bad := range []string{"hello", "1 2 3 4 5 - a b c", "x 1 0:1 / / rw - t s rw", "1 1 0:1 / / rw - t"} {
		if _, err := parseMountInfoLine(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzUnmangle: decoding what the kernel's mangling encodes gives the
// original back, and arbitrary input never panics.
func FuzzUnmangle(f *testing.F) {
	f.Add("/mnt/a b\tc\nd\\e")
	f.Add(`\040\0\1234\777`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = unmangle(s)
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case ' ', '\t', '\n', '\\':
				fmt.Fprintf(&b, "\\%03o", s[i])
			default:
				b.WriteByte(s[i])
			}
		}
		if got := unmangle(b.String()); got != s {
			t.Fatalf("unmangle(%q) = %q, want %q", b.String(), got, s)
		}
	})
}
