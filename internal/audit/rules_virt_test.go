package audit

// kvm: /proc/stat steal 71 of about 137000 jiffies (0.05%). metal: no
// hypervisor flag.

func init() {
	highSteal := "cpu  31212 0 8699 66746 457 0 99 30071 0 0\ncpu0 15230 0 3942 34376 53 0 18 15031 0 0\ncpu1 15982 0 4756 32369 404 0 81 15040 0 0\n"
	addRuleCases(
		ruleCase{Rule: "VIRT-STEAL", Name: "little steal", Tree: "kvm", Want: Pass},
		ruleCase{Rule: "VIRT-STEAL", Name: "22% steal", Tree: "kvm", Want: Fail,
			Edits: map[string]string{"/proc/stat": patched("kvm", "/proc/stat", func(s string) string {
				return highSteal + s[indexLine(s, 3):]
			})},
			Check: all(wantSeverity(High), observedContains("% of CPU time since boot"))},
		ruleCase{Rule: "VIRT-STEAL", Name: "3% steal for latency (max 1%)", Tree: "kvm", Workload: "latency", Want: Fail,
			Edits: map[string]string{"/proc/stat": patched("kvm", "/proc/stat", func(s string) string {
				return "cpu  31212 0 8699 92746 457 0 99 4071 0 0\ncpu0 15230 0 3942 47376 53 0 18 2031 0 0\ncpu1 15982 0 4756 45369 404 0 81 2040 0 0\n" + s[indexLine(s, 3):]
			})},
			Check: wantSeverity(High)},
		ruleCase{Rule: "VIRT-STEAL", Name: "bare metal", Tree: "metal", Want: NA},
	)
}

// indexLine returns the byte offset of line n (0-based) of s.
func indexLine(s string, n int) int {
	off := 0
	for i := 0; i < n; i++ {
		j := 0
		for off+j < len(s) && s[off+j] != '\n' {
			j++
		}
		off += j + 1
	}
	return off
}
