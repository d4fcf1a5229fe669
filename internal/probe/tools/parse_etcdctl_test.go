package tools

import "testing"

// 3.4.23-check-perf-fail.txt is real output on this 2-core VM (progress
// bar included); the pass file is the same run's form with PASS lines,
// written after etcd's source (3.4 ctl check.go) since this host fails.
func TestParseEtcdCheckPerf(t *testing.T) {
	r, err := ParseEtcdCheckPerf(string(fixture(t, "etcdctl", "3.4.23-check-perf-fail.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if r.Pass || len(r.Failed) != 2 {
		t.Errorf("fail: %+v", r)
	}
	wantNear(t, "throughput", r.Throughput, 133)
	wantNear(t, "slowest", r.Slowest, 0.767303)
	wantNear(t, "stddev", r.Stddev, 0.050808)
	r, err = ParseEtcdCheckPerf(string(fixture(t, "etcdctl", "3.4.23-check-perf-pass.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pass || len(r.Failed) != 0 {
		t.Errorf("pass: %+v", r)
	}
	wantNear(t, "throughput", r.Throughput, 151)
	for _, bad := range []string{"", "PASS\n", " 60 / 60  100.00% 1m0s\n", "PASS: Throughput is 1 writes/s\nFAIL: Stddev too high: 2s\nSlowest request took 1s\nPASS\n"} {
		if _, err := ParseEtcdCheckPerf(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseEtcdCheckPerf(f *testing.F) {
	seedFixtures(f, "etcdctl")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseEtcdCheckPerf(string(b))
		if err == nil && (r.Throughput < 0 || r.Slowest < 0 || r.Stddev < 0) {
			t.Errorf("accepted %+v", r)
		}
	})
}
