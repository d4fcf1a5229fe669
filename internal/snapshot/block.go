package snapshot

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/knob"

	"github.com/prometheus/procfs/blockdevice"
)

// collectBlock records each whole block device of /sys/block with the queue
// settings that decide I/O latency: scheduler, read-ahead, nr_requests,
// write cache mode and blk-mq hardware queues. The six queue files needed
// are read one by one and each missing one is recorded: procfs's queue
// reader reads all ~35 (six times the system calls of a live snapshot's
// block devices) and is all-or-nothing (one missing file fails the device,
// as on zram without a scheduler or an older kernel).
func collectBlock(c *collector) {
	if !c.hasSys() || !c.hasProc() {
		c.miss("block", "no /sys or /proc under the root")
		return
	}
	bfs, err := blockdevice.NewFS(c.fs.Path("/proc"), c.fs.Path("/sys"))
	if err != nil {
		c.missErr("block", "/sys/block", err)
		return
	}
	names, err := bfs.SysBlockDevices()
	if err != nil {
		c.missErr("block", "/sys/block", err)
		return
	}
	sort.Strings(names)
	for _, name := range names {
		size, err := blockSize(c, name)
		if err != nil {
			c.missErr(ElemPath("block", name, "size_bytes"), "/sys/block/"+name+"/size", err)
		}
		dev := BlockDevice{Name: name, SizeBytes: int64(size)}
		if p, err := c.fs.Resolve("/sys/block/" + name); err == nil {
			dev.Virtual = strings.HasPrefix(p, "/sys/devices/virtual/")
		}
		// An unattached loop or an unused ram disk has size 0 and no I/O to
		// tune; listing eight of them would bury the disks that matter.
		if err == nil && size == 0 && dev.Virtual {
			continue
		}
		dev.Model, _ = c.fs.ReadString("/sys/block/" + name + "/device/model")
		dev.Vendor, _ = c.fs.ReadString("/sys/block/" + name + "/device/vendor")
		blockQueueByFile(c, &dev)
		if ents, err := c.fs.ReadDir("/sys/block/" + name + "/mq"); err == nil {
			dev.HWQueues = len(ents)
		}
		c.s.Block = append(c.s.Block, dev)
	}
}

// blockSize is /sys/block/NAME/size (512-byte sectors) in bytes.
func blockSize(c *collector, name string) (uint64, error) {
	p := "/sys/block/" + name + "/size"
	s, err := c.fs.ReadString(p)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return 512 * n, nil
}

// blockQueueByFile reads the queue files one by one, recording each one the
// device lacks. A bio-based device (zram, some dm targets) has no scheduler
// and no nr_requests: that is a fact about it, so it is recorded too.
func blockQueueByFile(c *collector, dev *BlockDevice) {
	q := "/sys/block/" + dev.Name + "/queue/"
	fact := ElemPath("block", dev.Name, "")
	sched := knobFile("block[*].scheduler", dev.Name)
	if v, err := c.fs.ReadInt(q + "rotational"); err == nil {
		dev.Rotational = v == 1
	} else {
		c.missErr(fact+".rotational", q+"rotational", err)
	}
	if s, err := c.fs.ReadString(sched); err == nil {
		dev.Scheduler, dev.Schedulers = parseScheduler(s)
	} else {
		c.missErr(fact+".scheduler", sched, err)
	}
	for _, f := range []struct {
		file, fact string
		dst        *int64
	}{
		{knobFile("block[*].read_ahead_kib", dev.Name), "read_ahead_kib", &dev.ReadAheadKiB},
		{knobFile("block[*].nr_requests", dev.Name), "nr_requests", &dev.NrRequests},
		{q + "discard_max_bytes", "discard_max_bytes", &dev.DiscardMaxBytes},
	} {
		if v, err := c.fs.ReadInt(f.file); err == nil {
			*f.dst = v
		} else {
			c.missErr(fact+"."+f.fact, f.file, err)
		}
	}
	wc := knobFile("block[*].write_cache", dev.Name)
	if s, err := c.fs.ReadString(wc); err == nil {
		dev.WriteCache = s
	} else {
		c.missErr(fact+".write_cache", wc, err)
	}
}

// parseScheduler splits "none [mq-deadline] kyber bfq" into the selected
// scheduler and the available ones ("none" alone when there is no choice).
func parseScheduler(s string) (cur string, all []string) {
	cur, all, ok := knob.ParseChoice(s)
	if !ok && len(all) == 1 && !strings.ContainsAny(all[0], "[]") {
		cur = all[0]
	}
	return cur, all
}
