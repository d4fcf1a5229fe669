// Package cpuset converts between the kernel's two spellings of a set of
// CPUs: the list form ("0-3,8,10-11", as in smp_affinity_list, cpuset.cpus
// and `--cpus`) and the comma-grouped hex mask form ("00000000,0000000f", as
// in smp_affinity, rps_cpus and xps_cpus). Every package that reads or writes
// CPU sets uses it, so masks are formatted the way the kernel prints them.
package cpuset

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ParseList parses "0-3,8". An empty string is the empty set.
func ParseList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q: %q is not a CPU number", s, lo)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q: bad range %q", s, part)
			}
		}
		if b-a > 1<<16 {
			return nil, fmt.Errorf("bad CPU list %q: range %q too large", s, part)
		}
		for i := a; i <= b; i++ {
			seen[i] = true
		}
	}
	return sorted(seen), nil
}

// FormatList formats CPUs as the kernel's list form, collapsing runs.
func FormatList(cpus []int) string {
	c := append([]int(nil), cpus...)
	sort.Ints(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] <= c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if c[j] == c[i] {
			fmt.Fprintf(&b, "%d", c[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", c[i], c[j])
		}
		i = j + 1
	}
	return b.String()
}

// ParseMask parses a hex mask like "00000000,0000000f" (commas optional).
func ParseMask(s string) ([]int, error) {
	s = strings.TrimSpace(strings.ReplaceAll(s, ",", ""))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	seen := map[int]bool{}
	for i := 0; i < len(s); i++ {
		ch := s[len(s)-1-i]
		v, err := strconv.ParseUint(string(ch), 16, 8)
		if err != nil {
			return nil, fmt.Errorf("bad CPU mask %q", s)
		}
		for bit := 0; bit < 4; bit++ {
			if v&(1<<bit) != 0 {
				seen[i*4+bit] = true
			}
		}
	}
	return sorted(seen), nil
}

// FormatMask formats CPUs as the kernel's mask form with 32-bit groups,
// padded to cover nrCPUs CPUs (at least one group).
func FormatMask(cpus []int, nrCPUs int) string {
	max := nrCPUs
	for _, c := range cpus {
		if c+1 > max {
			max = c + 1
		}
	}
	groups := (max + 31) / 32
	if groups == 0 {
		groups = 1
	}
	words := make([]uint32, groups)
	for _, c := range cpus {
		words[c/32] |= 1 << (c % 32)
	}
	parts := make([]string, groups)
	for i := range words {
		parts[groups-1-i] = fmt.Sprintf("%08x", words[i])
	}
	return strings.Join(parts, ",")
}

// MaskEmpty reports whether a hex mask selects no CPU (an unset rps_cpus).
func MaskEmpty(s string) bool {
	c, err := ParseMask(s)
	return err == nil && len(c) == 0
}

// Contains reports whether every CPU of sub is in set.
func Contains(set, sub []int) bool {
	m := make(map[int]bool, len(set))
	for _, c := range set {
		m[c] = true
	}
	for _, c := range sub {
		if !m[c] {
			return false
		}
	}
	return true
}

func sorted(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	sort.Ints(out)
	return out
}
