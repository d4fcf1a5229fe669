package audit

import (
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/snapshot"
)

// Filesystem mount rules: online discard and access-time updates, two mount
// options that turn reads or deletes into extra device work.

func registerFsRules() {
	register(
		&Rule{
			ID: "FS-MOUNT-DISCARD", Title: "No synchronous online discard; periodic fstrim instead", Area: "fs",
			Severity: Low, Knob: "/proc/<pid>/mountinfo (discard)",
			Why: "The discard mount option sends a TRIM for every freed extent as files are deleted; on SATA drives before 3.1 TRIM is a " +
				"non-queued command that drains the 32-deep NCQ queue each time, so delete-heavy work (log rotation, compaction, temp tables) " +
				"stalls other I/O. Red Hat recommends batch discard (fstrim, e.g. the weekly fstrim.timer) unless online discard is needed. " +
				"btrfs discard=async queues discards in the background and is fine.",
			Source: "https://docs.redhat.com/en/documentation/red_hat_enterprise_linux/7/html/storage_administration_guide/fs-discard-unused-blocks",
			Check:  checkMountDiscard,
		},
		&Rule{
			ID: "FS-MOUNT-ATIME", Title: "Reads do not update access times (relatime or noatime)", Area: "fs",
			Severity: Low, Knob: "/proc/<pid>/mountinfo (relatime, noatime)",
			Why: "With strictatime every read of a file dirties its inode, so a read-only workload issues a metadata write per file read; " +
				"relatime (the default since Linux 2.6.30) updates atime at most once a day or when it is older than mtime, noatime never.",
			Source: "https://man7.org/linux/man-pages/man8/mount.8.html",
			Check:  checkMountAtime,
		},
	)
}

// diskFS are filesystems that live on a block device.
var diskFS = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true, "f2fs": true, "jfs": true, "reiserfs": true, "bcachefs": true,
}

// diskMounts returns the block-backed mounts, one per mount point (bind
// mounts and container namespaces repeat them).
func diskMounts(s *snapshot.Snapshot) ([]snapshot.Mount, Result, bool) {
	if r, ok := missingFact(s, "mounts"); !ok {
		return nil, r, false
	}
	seen := map[string]bool{}
	var out []snapshot.Mount
	for _, m := range s.Mounts {
		if !diskFS[m.FSType] || seen[m.MountPoint] {
			continue
		}
		seen[m.MountPoint] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, naResult("no block-device filesystem mounted"), false
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MountPoint < out[j].MountPoint })
	return out, Result{}, true
}

func hasOption(m snapshot.Mount, opt string) bool {
	for _, o := range m.Options {
		if o == opt {
			return true
		}
	}
	return false
}

func checkMountDiscard(ctx *Context) Result {
	mounts, res, ok := diskMounts(ctx.S)
	if !ok {
		return res
	}
	var bad []string
	var changes []Change
	for _, m := range mounts {
		if !hasOption(m, "discard") && !hasOption(m, "discard=sync") {
			continue
		}
		bad = append(bad, m.MountPoint+" ("+m.FSType+" on "+m.Device+")")
		changes = append(changes, Change{Kind: KindCommand, Target: m.MountPoint,
			Value:   "mount -o remount,nodiscard " + m.MountPoint + " && systemctl enable --now fstrim.timer  # and drop discard from /etc/fstab",
			Current: "mount -o remount,discard " + m.MountPoint})
	}
	expected := "no discard mount option; periodic fstrim"
	if len(bad) == 0 {
		return passResult("no filesystem mounted with online discard", expected)
	}
	return failResult("mounted with discard: "+strings.Join(bad, ", "), expected, changes...)
}

func checkMountAtime(ctx *Context) Result {
	mounts, res, ok := diskMounts(ctx.S)
	if !ok {
		return res
	}
	var bad []string
	var changes []Change
	for _, m := range mounts {
		if hasOption(m, "relatime") || hasOption(m, "noatime") {
			continue
		}
		bad = append(bad, m.MountPoint+" ("+m.FSType+")")
		changes = append(changes, Change{Kind: KindCommand, Target: m.MountPoint,
			Value:   "mount -o remount,relatime " + m.MountPoint + "  # and in /etc/fstab",
			Current: "mount -o remount,strictatime " + m.MountPoint})
	}
	expected := "relatime or noatime on every disk filesystem"
	if len(bad) == 0 {
		return passResult("relatime or noatime on all disk filesystems", expected)
	}
	return failResult("strictatime (atime updated on every read): "+strings.Join(bad, ", "), expected, changes...)
}
