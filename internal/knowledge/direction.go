package knowledge

import "strings"

// Direction. A difference in a setting explains a metric only when it moves
// the metric the way it moved: a governor switched to powersave explains
// CPU metrics that got worse, not ones that got better. Faster says, for
// the knobs where the direction is known, whether the other side's value is
// expected to be faster (+1), slower (−1) or either (0). Values are as the
// snapshot diff renders them ("(absent)" for a missing key).
func (e *Entry) Faster(path, before, after string) int {
	if f := directions[e.ID]; f != nil {
		return f(path, before, after)
	}
	return 0
}

const absent = "(absent)"

var directions = map[string]func(path, before, after string) int{
	// THP: more huge pages fewer faults and TLB misses for the memory
	// metrics this entry covers (the latency cost of defrag=always is not a
	// memory-throughput effect).
	"thp": func(path, before, after string) int {
		if !strings.HasSuffix(path, ".enabled") && !strings.Contains(path, "transparent_hugepage") {
			return 0
		}
		return rank(after, "never", "madvise", "always") - rank(before, "never", "madvise", "always")
	},
	// Governors: the diff is per governor name, the value the CPUs using
	// it; powersave (or ondemand, conservative) appearing is slower,
	// performance appearing faster.
	"cpu-governor": func(path, before, after string) int {
		name := path[strings.LastIndexByte(path, '.')+1:]
		if !strings.HasPrefix(path, "cpu.governors.") {
			return 0
		}
		appeared := before == absent && after != absent
		gone := before != absent && after == absent
		switch {
		case name == "performance" && appeared, name != "performance" && gone:
			return 1
		case name == "performance" && gone, name != "performance" && appeared:
			return -1
		}
		return 0
	},
	"cpu-boost": func(path, before, after string) int {
		if path != "cpu.boost" {
			return 0
		}
		switch {
		case before == "false" && after == "true":
			return 1
		case before == "true" && after == "false":
			return -1
		}
		return 0
	},
	// Mitigations: a vulnerability file going from "Mitigation: …" to
	// "Vulnerable"/"Not affected" is cheaper kernel entry, and back.
	"mitigations": func(path, before, after string) int {
		if !strings.HasPrefix(path, "kernel.vulnerabilities.") {
			return 0
		}
		m := func(s string) int {
			if strings.HasPrefix(s, "Mitigation") {
				return 1
			}
			return 0
		}
		return m(before) - m(after)
	},
}

// rank is v's position in order, or −1 when absent; compared, two ranks
// give the sign of the move (clamped by the caller's use of the sign).
func rank(v string, order ...string) int {
	for i, o := range order {
		if v == o {
			return i
		}
	}
	return -1
}
