package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
)

// overlay is fixture.Tree with edits that follow the tree's own relative
// directory links (an edit below /sys/class/dmi/id/… lands in the link's
// target, as it would on a real filesystem). The base tree is copied, not
// linked: a tree is read confined (hostfs), so links to the base tree by
// absolute path would be followed inside the copy and read nothing.
func overlay(t testing.TB, name string, edits map[string]string) hostfs.FS {
	t.Helper()
	src, dst := fixture.Dir(name), t.TempDir()
	real := map[string]bool{}
	final := map[string]string{} // edited path → path the edit lands on
	for p := range edits {
		rel, ok := realize(src, strings.TrimPrefix(filepath.Clean("/"+p), "/"), real, 0)
		if !ok {
			return fixture.Tree(t, name, edits)
		}
		final[p] = rel
	}
	var mirror func(rel string)
	mirror = func(rel string) {
		ents, err := os.ReadDir(filepath.Join(src, rel))
		if err != nil {
			t.Fatalf("overlay %s: %v", name, err)
		}
		for _, e := range ents {
			r := filepath.Join(rel, e.Name())
			from, to := filepath.Join(src, r), filepath.Join(dst, r)
			switch {
			case e.Type()&os.ModeSymlink != 0:
				l, err := os.Readlink(from)
				if err == nil {
					err = os.Symlink(l, to) // the tree's own link, kept as is
				}
				if err != nil {
					t.Fatal(err)
				}
			case e.IsDir():
				if err := os.Mkdir(to, 0o755); err != nil {
					t.Fatal(err)
				}
				mirror(r)
			default:
				b, err := os.ReadFile(from)
				if err == nil {
					err = os.WriteFile(to, b, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	mirror("")
	for p, content := range edits {
		full := filepath.Join(dst, final[p])
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(full); err != nil {
			t.Fatal(err)
		}
		if content == fixture.Delete {
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := hostfs.New(dst)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// realize marks the directories on the way to rel as real, following the
// tree's relative directory links, and returns where rel lands. ok is false
// for a link that leaves the tree.
func realize(src, rel string, real map[string]bool, depth int) (string, bool) {
	if depth > 8 {
		return "", false
	}
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts)-1; i++ {
		d := filepath.Join(parts[:i+1]...)
		fi, err := os.Lstat(filepath.Join(src, d))
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			l, err := os.Readlink(filepath.Join(src, d))
			if err != nil || filepath.IsAbs(l) {
				return "", false
			}
			to := filepath.Join(filepath.Dir(d), l)
			if to == ".." || strings.HasPrefix(to, "../") {
				return "", false
			}
			return realize(src, filepath.Join(append([]string{to}, parts[i+1:]...)...), real, depth+1)
		}
		real[d] = true
	}
	return rel, true
}

// TestOverlayLeavesBaseAlone guards the helper: an edit or delete must
// change the overlay only.
func TestOverlayLeavesBaseAlone(t *testing.T) {
	before, err := os.ReadFile(filepath.Join(fixture.Dir("kvm"), "proc/loadavg"))
	if err != nil {
		t.Fatal(err)
	}
	fs := overlay(t, "kvm", map[string]string{"/proc/loadavg": "9.00 9.00 9.00 1/2 3\n", "/proc/uptime": fixture.Delete})
	got, _ := fs.ReadString("/proc/loadavg")
	wantEq(t, "edited loadavg", got, "9.00 9.00 9.00 1/2 3")
	if fs.Exists("/proc/uptime") {
		t.Error("deleted /proc/uptime still exists in the overlay")
	}
	after, _ := os.ReadFile(filepath.Join(fixture.Dir("kvm"), "proc/loadavg"))
	wantEq(t, "base loadavg", string(after), string(before))
	if _, err := os.Stat(filepath.Join(fixture.Dir("kvm"), "proc/uptime")); err != nil {
		t.Errorf("base /proc/uptime was removed: %v", err)
	}
	if v, _ := fs.ReadString("/proc/sys/kernel/hostname"); v != "perflab-kvm" {
		t.Errorf("unedited file through the overlay = %q", v)
	}
}
