package monitor

import (
	"fmt"
	"strconv"
	"strings"
)

// Counter is one cumulative /proc/vmstat event count, summed over the
// names it goes by; OK says at least one of them was in the file.
type Counter struct {
	N  uint64
	OK bool
}

func (c *Counter) add(n uint64) { c.N, c.OK = c.N+n, true }

// VMStat holds the /proc/vmstat event counters the monitor turns into
// rates. Names changed over kernel versions, so each field sums every name
// it has had. Linux 4.8 moved the LRU lists from zones to nodes: reclaim
// counters lost their zone (pgscan_kswapd_dma32 → pgscan_kswapd; 2.6.32
// had only pgsteal_<zone>), while allocstall gained one
// (allocstall → allocstall_normal, …).
type VMStat struct {
	PgpgIn     Counter // KiB read from block devices (the kernel halves its sector count)
	PgpgOut    Counter // KiB written to block devices
	MajFault   Counter // faults that had to wait for I/O
	Scan       Counter // pages scanned by kswapd and by direct reclaim
	ScanDirect Counter // pages scanned by allocating tasks in direct reclaim
	// Steal is pages reclaimed by kswapd and direct reclaim, the same
	// reclaimers as Scan so that Steal/Scan is reclaim efficiency.
	// khugepaged's and proactive (memory.reclaim) reclaim are left out.
	Steal      Counter
	AllocStall Counter // allocations that entered direct reclaim
}

// zones are the suffixes of per-zone counter names (TEXTS_FOR_ZONES in
// mm/vmstat.c).
var zones = map[string]bool{"dma": true, "dma32": true, "normal": true, "high": true, "movable": true, "device": true}

// is reports whether name is base itself or base's per-zone form.
// pgscan_direct_throttle is therefore not pgscan_direct.
func is(name, base string) bool { return name == base || zoned(name, base) }

// zoned reports whether name is base_<zone>: pgsteal_dma32 is, while
// pgsteal_anon (the same pages broken down by type) is not.
func zoned(name, base string) bool {
	return len(name) > len(base)+1 && name[len(base)] == '_' && strings.HasPrefix(name, base) && zones[name[len(base)+1:]]
}

// parseVMStat reads the counters the monitor records from the text of
// /proc/vmstat ("name value" per line). Lines it does not need are not
// looked at beyond their name; a needed one whose value is not an unsigned
// integer means the file is not /proc/vmstat, and is an error.
func parseVMStat(text string) (VMStat, error) {
	var v VMStat
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		name, value, _ := strings.Cut(line, " ")
		var to [2]*Counter
		switch {
		case name == "pgpgin":
			to[0] = &v.PgpgIn
		case name == "pgpgout":
			to[0] = &v.PgpgOut
		case name == "pgmajfault":
			to[0] = &v.MajFault
		case is(name, "pgscan_kswapd"):
			to[0] = &v.Scan
		case is(name, "pgscan_direct"):
			to[0], to[1] = &v.Scan, &v.ScanDirect
		case is(name, "pgsteal_kswapd"), is(name, "pgsteal_direct"), zoned(name, "pgsteal"):
			to[0] = &v.Steal
		case is(name, "allocstall"):
			to[0] = &v.AllocStall
		default:
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return VMStat{}, fmt.Errorf("vmstat: %s: %q is not a count", name, value)
		}
		for _, c := range to {
			if c != nil {
				c.add(n)
			}
		}
	}
	return v, nil
}

// missing lists the JSON fields of a point that a host whose vmstat
// looks like v cannot fill (a kernel without CONFIG_VM_EVENT_COUNTERS
// prints none of the event counters).
func (v VMStat) missing() []string {
	var out []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"pgpgin_kib_per_s", v.PgpgIn.OK}, {"pgpgout_kib_per_s", v.PgpgOut.OK},
		{"pgmajfault_per_s", v.MajFault.OK}, {"pgscan_per_s", v.Scan.OK},
		{"pgscan_direct_per_s", v.ScanDirect.OK}, {"pgsteal_per_s", v.Steal.OK},
		{"allocstall_per_s", v.AllocStall.OK},
	} {
		if !f.ok {
			out = append(out, f.name)
		}
	}
	return out
}
