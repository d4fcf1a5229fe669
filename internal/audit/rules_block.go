package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/snapshot"
)

// Block device rules: the write cache mode (seed 004: write-through RAID made
// MySQL writes about 40x slower), the I/O scheduler per device type, and
// read-ahead.

const (
	srcSeed004    = "seed 004_1dfc2b4c4718b7c2.txt"
	srcQueueSysfs = "https://docs.kernel.org/block/queue-sysfs.html"
)

func registerBlockRules() {
	register(
		&Rule{
			ID: "BLOCK-WRITE-CACHE", Title: "Disks cache writes (write back)", Area: "block",
			Severity: Medium, Knob: "/sys/block/<dev>/queue/write_cache",
			Why: "With a write-through cache every write waits for the platters: seed 004 traced a container host's slow MySQL to a RAID " +
				"controller in write-through mode and quotes a measured ~40x MySQL difference between write back and write through " +
				"(MySQL Technical Internals: InnoDB, 2nd ed., ch. 9). With write back the kernel sends cache flushes on fsync, so a plain disk stays safe; " +
				"a RAID card's policy is set with the controller tool (storcli … set wrcache=WB), and write back there is only safe with a battery- or " +
				"flash-backed cache: without one, a power cut loses acknowledged writes. Non-rotational devices without a volatile cache " +
				"(enterprise SSDs with power-loss protection) report write through and are fast, so only rotational devices are judged.",
			Source: srcSeed004 + "; " + srcQueueSysfs,
			Check:  checkWriteCache,
		},
		&Rule{
			ID: "BLOCK-SCHEDULER", Title: "I/O scheduler suits the device type", Area: "block",
			Severity: Medium, Knob: "/sys/block/<dev>/queue/scheduler",
			Why: "NVMe and SATA SSDs complete I/O in tens of microseconds and do their own reordering, so a scheduler only adds CPU and lock cost per request: " +
				"none or mq-deadline. A rotational disk pays 5-10 ms per seek, and without a scheduler to sort and merge requests (mq-deadline) or share " +
				"the disk fairly (bfq) reads queue behind write bursts in arrival order. In a VM the hypervisor schedules the real disk, so none is accepted there too.",
			Source: srcQueueSysfs + "; https://docs.kernel.org/block/index.html",
			Check:  checkScheduler,
		},
		&Rule{
			ID: "BLOCK-READ-AHEAD", Title: "Read-ahead suits the workload", Area: "block",
			Severity: Low, Knob: "/sys/block/<dev>/queue/read_ahead_kb",
			Why: "Read-ahead turns sequential reads into large requests: seed 004 notes that read-ahead changes sequential read results by 20-40%. " +
				"Too much of it wastes I/O and page cache on random reads (databases), too little starves sequential scans; the workload sets the range.",
			Source: srcSeed004 + "; " + srcQueueSysfs,
			Check:  checkReadAhead,
		},
	)
}

// tunableDisks returns the block devices whose queue settings decide I/O:
// real disks (not loop, ram, zram), plus device-mapper and md devices for
// read-ahead, which the filesystem on top of them uses.
func tunableDisks(s *snapshot.Snapshot, withStacked bool) []snapshot.BlockDevice {
	var out []snapshot.BlockDevice
	for _, d := range s.Block {
		stacked := strings.HasPrefix(d.Name, "dm-") || strings.HasPrefix(d.Name, "md")
		switch {
		case strings.HasPrefix(d.Name, "sr"), strings.HasPrefix(d.Name, "fd"), d.SizeBytes == 0:
			continue
		case d.Virtual && !(withStacked && stacked):
			continue
		}
		out = append(out, d)
	}
	return out
}

func disksOrNA(s *snapshot.Snapshot, withStacked bool) ([]snapshot.BlockDevice, Result, bool) {
	if r, ok := missingFact(s, "block"); !ok {
		return nil, r, false
	}
	d := tunableDisks(s, withStacked)
	if len(d) == 0 {
		return nil, naResult("no disk (only virtual block devices)"), false
	}
	return d, Result{}, true
}

func virtualized(s *snapshot.Snapshot) bool {
	v := s.Host.Virtualization
	return v != "" && v != "none"
}

func checkWriteCache(ctx *Context) Result {
	s := ctx.S
	disks, res, ok := disksOrNA(s, false)
	if !ok {
		return res
	}
	var obs, skipped []string
	var changes []Change
	judged := 0
	for _, d := range disks {
		if d.WriteCache == "" {
			skipped = append(skipped, d.Name+": write_cache unreadable")
			continue
		}
		if !d.Rotational {
			skipped = append(skipped, d.Name+": non-rotational")
			continue
		}
		judged++
		obs = append(obs, d.Name+": "+d.WriteCache)
		if d.WriteCache == "write back" {
			continue
		}
		// Writing queue/write_cache only changes the kernel's view (whether it
		// sends flushes), not the device: the fix is on the device or the
		// controller, so it is a command for a person.
		dev := "/dev/" + d.Name
		fix := fmt.Sprintf("sdparm --set WCE=1 --save %s  # or hdparm -W1 %s for SATA; for a RAID virtual drive: storcli64 /cX/vY set wrcache=WB, only with a healthy BBU/CacheVault", dev, dev)
		undo := fmt.Sprintf("sdparm --set WCE=0 --save %s  # or hdparm -W0 %s; storcli64 /cX/vY set wrcache=WT", dev, dev)
		if virtualized(s) {
			fix = "set the VM disk's cache mode to writeback or none on the hypervisor (QEMU: cache=none); a guest cannot change it"
			undo = "restore the previous cache mode on the hypervisor"
		}
		changes = append(changes, Change{Kind: KindCommand, Target: dev, Value: fix, Current: undo})
	}
	if judged == 0 {
		return naResult("no rotational disk to judge (" + strings.Join(skipped, "; ") + ")")
	}
	expected := "write back on rotational disks (with a battery/flash-backed cache behind RAID)"
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	r := failResult(strings.Join(obs, "; "), expected, changes...)
	sev := Medium
	if ctx.W.Base() == "database" {
		sev = High
	}
	if virtualized(s) {
		sev--
		r.Reason = "virtual disk: the write-through mode is the hypervisor's (QEMU cache=writethrough or directsync); the real disk behind it is unknown"
	}
	r.Severity = severityPtr(sev)
	return r
}

func checkScheduler(ctx *Context) Result {
	s := ctx.S
	disks, res, ok := disksOrNA(s, false)
	if !ok {
		return res
	}
	ssd, res, ok := target(ctx, "block.scheduler.ssd")
	if !ok {
		return res
	}
	hdd, res, ok := target(ctx, "block.scheduler.hdd")
	if !ok {
		return res
	}
	vm := virtualized(s)
	var obs, skipped []string
	var changes []Change
	for _, d := range disks {
		if d.Scheduler == "" {
			skipped = append(skipped, d.Name+": no scheduler")
			continue
		}
		kind, e := "ssd", ssd
		if d.Rotational {
			kind, e = "hdd", hdd
		}
		obs = append(obs, fmt.Sprintf("%s (%s): %s", d.Name, kind, d.Scheduler))
		if e.Matches(d.Scheduler) || (vm && d.Scheduler == "none") {
			continue
		}
		changes = append(changes, factChange("block[*].scheduler", pickScheduler(e, d.Schedulers), d.Scheduler, d.Name))
	}
	if len(obs) == 0 {
		return naResult(strings.Join(skipped, "; "))
	}
	expected := "ssd: " + ssd.String() + "; hdd: " + hdd.String()
	if vm {
		expected += " (none also accepted in a VM)"
	}
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	return failResult(strings.Join(obs, "; "), expected, changes...)
}

// pickScheduler returns the first acceptable scheduler the kernel offers
// for the device, or the workload's first choice (which may need its module
// loaded, e.g. modprobe bfq) when none is offered.
func pickScheduler(e Expectation, avail []string) string {
	for _, want := range e.any {
		for _, a := range avail {
			if a == want {
				return a
			}
		}
	}
	return e.Value()
}

func checkReadAhead(ctx *Context) Result {
	s := ctx.S
	disks, res, ok := disksOrNA(s, true)
	if !ok {
		return res
	}
	e, res, ok := target(ctx, "block.read_ahead_kib")
	if !ok {
		return res
	}
	var obs []string
	var changes []Change
	for _, d := range disks {
		if s.Missing(snapshot.ElemPath("block", d.Name, "read_ahead_kib")) != "" {
			continue
		}
		v := strconv.FormatInt(d.ReadAheadKiB, 10)
		obs = append(obs, fmt.Sprintf("%s: %s KiB", d.Name, v))
		if !e.Matches(v) {
			changes = append(changes, factChange("block[*].read_ahead_kib", e.Value(), v, d.Name))
		}
	}
	if len(obs) == 0 {
		return naResult("read_ahead_kb unavailable on every disk")
	}
	expected := e.String() + " KiB"
	if len(changes) == 0 {
		return passResult(strings.Join(obs, "; "), expected)
	}
	return failResult(strings.Join(obs, "; "), expected, changes...)
}
