#!/usr/bin/env bash
# Rebuilds testdata/roots/procfs and testdata/roots/node_exporter from the
# fixture trees of prometheus/procfs and prometheus/node_exporter (Apache-2.0;
# see THIRD_PARTY.md). Their /sys (and procfs's /proc) trees are kept in
# ttar text archives; internal/tools/ttarx extracts them. Nothing of their
# code is copied, only their fixture data.
#
#   testdata/roots/mkthirdparty.sh PROCFS_GIT_DIR NODE_EXPORTER_GIT_DIR [PROCFS_COMMIT NE_COMMIT]
#
# Subtrees perflab never reads are dropped (listed in DROP below) to keep the
# repository small.
set -euo pipefail
cd "$(dirname "$0")/../.."
procfs_git=$1 ne_git=$2
procfs_rev=${3:-HEAD} ne_rev=${4:-HEAD}
roots=testdata/roots
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

DROP=(sys/fs/bcache sys/fs/bcachefs sys/fs/btrfs sys/fs/xfs sys/kernel/config
      sys/class/drm sys/class/fc_host sys/class/hwmon sys/class/infiniband
      sys/class/mei sys/class/nvme sys/class/nvme-subsystem sys/class/power_supply
      sys/class/powercap sys/class/sas_device sys/class/sas_end_device
      sys/class/sas_expander sys/class/sas_host sys/class/sas_phy sys/class/sas_port
      sys/class/scsi_tape sys/class/thermal sys/class/watchdog proc/spl proc/drbd)

prune() {
  for d in "${DROP[@]}"; do rm -rf "${1:?}/$d"; done
}

# procfs: testdata/fixtures.ttar holds fixtures/{proc,sys}.
git --git-dir="$procfs_git" show "$procfs_rev:testdata/fixtures.ttar" >"$tmp/procfs.ttar"
rm -rf "$roots/procfs"
go run ./internal/tools/ttarx -strip 1 -o "$roots/procfs" "$tmp/procfs.ttar"
prune "$roots/procfs"

# node_exporter: collector/fixtures/sys.ttar holds sys/; proc/ and
# usr/lib/os-release are plain files in git.
git --git-dir="$ne_git" show "$ne_rev:collector/fixtures/sys.ttar" >"$tmp/ne-sys.ttar"
rm -rf "$roots/node_exporter"
go run ./internal/tools/ttarx -o "$roots/node_exporter" "$tmp/ne-sys.ttar"
git --git-dir="$ne_git" archive "$ne_rev" collector/fixtures/proc collector/fixtures/usr |
  tar -x -C "$tmp"
cp -a "$tmp/collector/fixtures/proc" "$tmp/collector/fixtures/usr" "$roots/node_exporter/"
prune "$roots/node_exporter"

# Their licence and NOTICE travel with the data (Apache-2.0, section 4).
origin() { # tree git rev repo files
  git --git-dir="$2" show "$3:LICENSE" >"$roots/$1/LICENSE"
  git --git-dir="$2" show "$3:NOTICE" >"$roots/$1/NOTICE"
  cat >"$roots/$1/ORIGIN.md" <<END
Fixture data of https://github.com/$4 at commit $(git --git-dir="$2" rev-parse "$3"),
files $5, licensed Apache-2.0 (LICENSE, NOTICE here).
Extracted by testdata/roots/mkthirdparty.sh; subtrees perflab never reads were dropped:
${DROP[*]}
END
}
origin procfs "$procfs_git" "$procfs_rev" prometheus/procfs "testdata/fixtures.ttar"
origin node_exporter "$ne_git" "$ne_rev" prometheus/node_exporter \
  "collector/fixtures/sys.ttar, collector/fixtures/proc/ and collector/fixtures/usr/"
cat "$roots/procfs/ORIGIN.md" "$roots/node_exporter/ORIGIN.md"
