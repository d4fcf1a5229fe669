package trace

import "testing"

func TestKernelAtLeast(t *testing.T) {
	for rel, want := range map[string]bool{
		"6.18.0-1-amd64": true, "5.11.0": true, "5.10.209-rt": false, "4.19.0": false, "5.4": false, "bogus": false, "10.0": true,
	} {
		if got := kernelAtLeast(rel, 5, 11); got != want {
			t.Errorf("kernelAtLeast(%q, 5, 11) = %v, want %v", rel, got, want)
		}
	}
}
