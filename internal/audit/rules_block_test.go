package audit

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

// metal: sda is a PERC H730P RAID virtual drive (rotational, write through,
// mq-deadline, read-ahead 128 KiB); nvme0n1 is an SSD (none, write back).
// kvm: vda is a virtio disk reported rotational, mq-deadline, write back,
// read-ahead 8192 KiB. kunpeng has no /sys/block.

func init() {
	addRuleCases(
		// BLOCK-WRITE-CACHE
		ruleCase{Rule: "BLOCK-WRITE-CACHE", Name: "RAID write through for a database", Tree: "metal", Workload: "database", Want: Fail,
			Check: all(wantSeverity(High), observedContains("sda: write through"), changeCount(1),
				func(t *testing.T, f Finding) {
					c := f.Changes[0]
					// queue/write_cache only changes the kernel's view: the fix
					// must act on the device or the controller.
					if c.Kind != KindCommand || !strings.Contains(f.Fix, "sdparm --set WCE=1 --save /dev/sda") ||
						!strings.Contains(f.Fix, "wrcache=WB") || !strings.Contains(f.Fix, "BBU") ||
						!strings.Contains(f.Revert, "WCE=0") {
						t.Errorf("change %+v fix %q revert %q", c, f.Fix, f.Revert)
					}
				})},
		ruleCase{Rule: "BLOCK-WRITE-CACHE", Name: "RAID write through", Tree: "metal", Want: Fail, Check: wantSeverity(Medium)},
		ruleCase{Rule: "BLOCK-WRITE-CACHE", Name: "RAID write back", Tree: "metal", Workload: "database", Want: Pass,
			Edits: map[string]string{"/sys/block/sda/queue/write_cache": "write back\n"}},
		ruleCase{Rule: "BLOCK-WRITE-CACHE", Name: "virtio write through", Tree: "kvm", Workload: "database", Want: Fail,
			Edits: map[string]string{"/sys/block/vda/queue/write_cache": "write through\n"},
			Check: all(wantSeverity(Medium), reasonContains("hypervisor"))},
		ruleCase{Rule: "BLOCK-WRITE-CACHE", Name: "only SSDs", Tree: "metal", Want: NA,
			Edits: map[string]string{"/sys/block/sda/queue/rotational": "0\n"}},
		ruleCase{Rule: "BLOCK-WRITE-CACHE", Name: "no /sys/block", Tree: "kunpeng", Want: NA},

		// BLOCK-SCHEDULER
		ruleCase{Rule: "BLOCK-SCHEDULER", Name: "mq-deadline HDD, none NVMe", Tree: "metal", Want: Pass,
			Check: observedContains("sda (hdd): mq-deadline")},
		ruleCase{Rule: "BLOCK-SCHEDULER", Name: "HDD without scheduler", Tree: "metal", Want: Fail,
			Edits: map[string]string{"/sys/block/sda/queue/scheduler": "[none] mq-deadline kyber bfq\n"},
			Check: all(changeCount(1), wantChange("/sys/block/sda/queue/scheduler", "mq-deadline"),
				wantCurrent("/sys/block/sda/queue/scheduler", "none"))},
		ruleCase{Rule: "BLOCK-SCHEDULER", Name: "bfq on NVMe for a database", Tree: "metal", Workload: "database", Want: Fail,
			Edits: map[string]string{"/sys/block/nvme0n1/queue/scheduler": "none mq-deadline kyber [bfq]\n"},
			Check: wantChange("/sys/block/nvme0n1/queue/scheduler", "none")},
		ruleCase{Rule: "BLOCK-SCHEDULER", Name: "none on a VM's disk", Tree: "kvm", Want: Pass,
			Edits: map[string]string{"/sys/block/vda/queue/scheduler": "[none] mq-deadline kyber bfq\n"}},
		ruleCase{Rule: "BLOCK-SCHEDULER", Name: "no /sys/block", Tree: "kunpeng", Want: NA},

		// BLOCK-READ-AHEAD
		ruleCase{Rule: "BLOCK-READ-AHEAD", Name: "128 KiB", Tree: "metal", Want: Pass},
		ruleCase{Rule: "BLOCK-READ-AHEAD", Name: "8 MiB on vda", Tree: "kvm", Want: Fail,
			Check: all(wantChange("/sys/block/vda/queue/read_ahead_kb", "4096"), wantCurrent("/sys/block/vda/queue/read_ahead_kb", "8192"))},
		ruleCase{Rule: "BLOCK-READ-AHEAD", Name: "64 KiB for throughput", Tree: "metal", Workload: "throughput", Want: Fail,
			Edits: map[string]string{"/sys/block/sda/queue/read_ahead_kb": "64\n"},
			Check: all(changeCount(1), wantChange("/sys/block/sda/queue/read_ahead_kb", "128"))},
		ruleCase{Rule: "BLOCK-READ-AHEAD", Name: "no /sys/block", Tree: "kunpeng", Want: NA},
		ruleCase{Rule: "BLOCK-READ-AHEAD", Name: "only a loop device", Tree: "kvm", Want: NA,
			Edits: map[string]string{"/sys/block/vda": fixture.Delete, "/sys/block/zram0": fixture.Delete}},
	)
}
