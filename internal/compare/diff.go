package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/knowledge"
	"github.com/perflab/perflab/internal/snapshot"
)

// Diff is one fact that differs between two snapshots (or two runs'
// settings), at a dotted path: "memory.thp.enabled",
// "net.interfaces[eth0].mtu", "sysctl.net.core.somaxconn",
// "block[sda].scheduler". Absent is shown as "(absent)".
type Diff struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

const absent = "(absent)"

// DiffSnapshots walks both snapshots as generic JSON trees and returns
// every differing leaf, sorted by path, except facts that change on every
// collection (counters, free memory, uptime, ids; see volatile). Arrays of
// objects are matched by their name-like field, so a reordered NIC list is
// not a difference; arrays of strings are compared as sets and arrays of
// CPU ids as CPU lists.
func DiffSnapshots(a, b *snapshot.Snapshot) []Diff {
	if a == nil || b == nil {
		return nil
	}
	ta, tb := tree(a), tree(b)
	var out []Diff
	walk("", ta, tb, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func tree(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var t any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if dec.Decode(&t) != nil {
		return nil
	}
	return t
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

func walk(path string, a, b any, out *[]Diff) {
	if path != "" && volatile(path) {
		return
	}
	ma, aIsMap := a.(map[string]any)
	mb, bIsMap := b.(map[string]any)
	if aIsMap || bIsMap {
		keys := map[string]bool{}
		for k := range ma {
			keys[k] = true
		}
		for k := range mb {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			va, oka := ma[k]
			vb, okb := mb[k]
			if !oka {
				va = nil
			}
			if !okb {
				vb = nil
			}
			walk(join(path, k), va, vb, out)
		}
		return
	}
	la, aIsList := a.([]any)
	lb, bIsList := b.([]any)
	if aIsList || bIsList {
		walkList(path, la, lb, out)
		return
	}
	sa, sb := scalar(a), scalar(b)
	if sa != sb {
		*out = append(*out, Diff{Path: path, Before: sa, After: sb})
	}
}

// walkList matches elements of object arrays by identity and compares
// scalar arrays as a whole.
func walkList(path string, a, b []any, out *[]Diff) {
	if isObjects(a) && isObjects(b) && (len(a) > 0 || len(b) > 0) {
		ia, ib := byIdentity(a), byIdentity(b)
		keys := map[string]bool{}
		for k := range ia {
			keys[k] = true
		}
		for k := range ib {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			walk(path+"["+k+"]", ia[k], ib[k], out)
		}
		return
	}
	sa, sb := list(a), list(b)
	if sa != sb {
		*out = append(*out, Diff{Path: path, Before: sa, After: sb})
	}
}

func isObjects(l []any) bool {
	for _, v := range l {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// identity fields, most specific first: NICs, devices, queues, C-states
// and services have names; mounts their mount point; IRQs a number; NUMA
// nodes an id; caches a level and type.
var identity = []string{"name", "mount_point", "number", "id"}

func byIdentity(l []any) map[string]any {
	out := map[string]any{}
	for i, v := range l {
		m := v.(map[string]any)
		key := ""
		for _, f := range identity {
			if x, ok := m[f]; ok {
				key = scalar(x)
				break
			}
		}
		if key == "" {
			if lv, ok := m["level"]; ok {
				key = "L" + scalar(lv) + "-" + scalar(m["type"])
			} else {
				key = strconv.Itoa(i)
			}
		}
		out[key] = v
	}
	return out
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return absent
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case map[string]any, []any:
		data, _ := json.Marshal(x)
		return string(data)
	}
	return fmt.Sprint(v)
}

// list renders a scalar array: integer lists as CPU lists ("0-3,8"),
// string lists sorted and comma-separated, so order does not matter.
func list(l []any) string {
	if l == nil {
		return absent
	}
	ints := make([]int, 0, len(l))
	strs := make([]string, 0, len(l))
	allInts := true
	for _, v := range l {
		s := scalar(v)
		strs = append(strs, s)
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			allInts = false
		}
		ints = append(ints, n)
	}
	if allInts && len(ints) > 0 {
		sort.Ints(ints)
		return cpuset.FormatList(ints)
	}
	sort.Strings(strs)
	return strings.Join(strs, ",")
}

// volatile reports facts that differ between any two collections of the
// same host and so say nothing about why performance differs.
func volatile(path string) bool {
	for _, v := range volatilePaths {
		if knowledge.MatchPrefix(v, path) {
			return true
		}
	}
	return false
}

var volatilePaths = []string{
	"id", "taken_at", "root", "perflab",
	"host.uptime_seconds", "host.boot_id",
	"memory.available_kib", "memory.swap_free_kib", "memory.anon_hugepages_kib",
	"memory.dirty_kib", "memory.writeback_kib", "memory.hugepages_free",
	"cpu.cur_khz", "cpu.numa[*].mem_free_kib", "cpu.numa[*].hugepages_free",
	"irqs[*].total", "irqs[*].per_cpu",
	"net.conntrack.count", "net.sockets",
	"load", "limits.file_nr_allocated", "limits.threads",
	"cgroup.nr_periods", "cgroup.nr_throttled", "cgroup.throttled_us",
	"services.*.pids",
	"process.pid", "process.rss_kib", "process.anon_hugepages_kib", "process.threads",
	"sysctl.kernel.random", "sysctl.fs.dentry-state", "sysctl.fs.inode-nr",
	"sysctl.fs.inode-state", "sysctl.fs.file-nr", "sysctl.kernel.ns_last_pid",
	"sysctl.kernel.pty.nr", "sysctl.net.netfilter.nf_conntrack_count",
	"sysctl.fs.aio-nr", "sysctl.fs.dquot-nr", "sysctl.kernel.tainted",
}
