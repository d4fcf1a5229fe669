package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/snapshot"
)

// metal mounts / (ext4, relatime) and /data (xfs, noatime) without discard;
// kvm mounts / (ext4 on vda) with discard; kunpeng has no mountinfo.

// treeFileWith returns a base tree's file with fn applied, for an edit that
// changes one line of a multi-line file. A missing file yields "", which
// makes the case fail visibly instead of testing the wrong host.
func treeFileWith(tree, path string, fn func(string) string) string {
	b, err := os.ReadFile(filepath.Join(fixture.Dir(tree), path))
	if err != nil {
		return ""
	}
	return fn(string(b))
}

// replaceText replaces old with new.
func replaceText(old, new string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, 1) }
}

const metalMountinfo = "/proc/4242/mountinfo" // /proc/self

func init() {
	addRuleCases(
		// FS-MOUNT-DISCARD
		ruleCase{Rule: "FS-MOUNT-DISCARD", Name: "no discard", Tree: "metal", Want: Pass},
		ruleCase{Rule: "FS-MOUNT-DISCARD", Name: "ext4 / with discard", Tree: "kvm", Want: Fail,
			Check: all(observedContains("/ (ext4 on /dev/vda)"), changeCount(1),
				func(t *testing.T, f Finding) {
					if !strings.HasPrefix(f.Fix, "mount -o remount,nodiscard / && systemctl enable --now fstrim.timer") ||
						f.Revert != "mount -o remount,discard /" {
						t.Errorf("fix %q revert %q", f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "FS-MOUNT-DISCARD", Name: "xfs /data with discard", Tree: "metal", Want: Fail,
			Edits: map[string]string{metalMountinfo: treeFileWith("metal", metalMountinfo, replaceText("rw,attr2,inode64", "rw,attr2,discard,inode64"))},
			Check: observedContains("/data (xfs on /dev/nvme0n1p1)")},
		ruleCase{Rule: "FS-MOUNT-DISCARD", Name: "no mountinfo", Tree: "kunpeng", Want: NA},

		// FS-MOUNT-ATIME
		ruleCase{Rule: "FS-MOUNT-ATIME", Name: "relatime and noatime", Tree: "metal", Want: Pass},
		ruleCase{Rule: "FS-MOUNT-ATIME", Name: "strictatime /", Tree: "metal", Want: Fail,
			Edits: map[string]string{metalMountinfo: treeFileWith("metal", metalMountinfo, replaceText("/ / rw,relatime shared:1", "/ / rw shared:1"))},
			Check: all(observedContains("/ (ext4)"), changeCount(1), wantChange("/", "mount -o remount,relatime /  # and in /etc/fstab"))},
		ruleCase{Rule: "FS-MOUNT-ATIME", Name: "no mountinfo", Tree: "kunpeng", Want: NA},
	)
}

func TestMountRulesSkipPseudoAndAsyncDiscard(t *testing.T) {
	s := twoNodeSnapshot()
	s.Mounts = []snapshot.Mount{
		{Device: "/dev/sdb1", MountPoint: "/srv", FSType: "btrfs", Options: []string{"rw", "relatime", "discard=async"}},
		{Device: "tmpfs", MountPoint: "/run", FSType: "tmpfs", Options: []string{"rw"}},
		// The same filesystem seen twice (a bind mount) is judged once.
		{Device: "/dev/sda1", MountPoint: "/", FSType: "ext4", Options: []string{"rw", "noatime", "discard"}},
		{Device: "/dev/sda1", MountPoint: "/", FSType: "ext4", Options: []string{"rw", "noatime", "discard"}},
	}
	f := evalOn(t, "FS-MOUNT-DISCARD", "general", s)
	if f.Status != Fail || len(f.Changes) != 1 || f.Changes[0].Target != "/" {
		t.Errorf("discard: %s %+v", f.Status, f.Changes)
	}
	if f := evalOn(t, "FS-MOUNT-ATIME", "general", s); f.Status != Pass {
		t.Errorf("atime: tmpfs without relatime judged: %s %s", f.Status, f.Observed)
	}
	s.Mounts = s.Mounts[:2]
	if f := evalOn(t, "FS-MOUNT-DISCARD", "general", s); f.Status != Pass {
		t.Errorf("btrfs discard=async: %s", f.Status)
	}
}
