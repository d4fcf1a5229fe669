package audit

import (
	"reflect"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// collectFixture opens the fixture tree name and takes its snapshot with
// opt: the full side of a comparison, and the tree to collect the other.
func collectFixture(t *testing.T, name string, opt snapshot.Options) (hostfs.FS, *snapshot.Snapshot) {
	t.Helper()
	fs, err := hostfs.New(fixture.Dir(name))
	if err != nil {
		t.Fatal(err)
	}
	full, err := snapshot.Collect(fs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return fs, full
}

// eachWorkloadPair calls f with two fresh copies of every built-in
// workload, untrusted and then trusted: one to audit each side of a
// comparison, so neither audit can see the other's state.
func eachWorkloadPair(f func(wname string, trusted bool, w1, w2 *Workload)) {
	for _, wname := range Workloads() {
		for _, trusted := range []bool{false, true} {
			w1, _ := LookupWorkload(wname)
			w2, _ := LookupWorkload(wname)
			w1.Trusted, w2.Trusted = trusted, trusted
			f(wname, trusted, w1, w2)
		}
	}
}

// sameFindings fails t when the findings a and b differ, naming the first
// finding that differs with both sides (called sideA and sideB).
func sameFindings(t *testing.T, what string, a, b []Finding, sideA, sideB string) {
	t.Helper()
	if reflect.DeepEqual(a, b) {
		return
	}
	for i := range a {
		if i < len(b) && !reflect.DeepEqual(a[i], b[i]) {
			t.Errorf("%s: %s differs:\n%s: %+v\n%s: %+v", what, a[i].Rule, sideA, a[i], sideB, b[i])
			return
		}
	}
	t.Errorf("%s: %d findings (%s) against %d (%s)", what, len(a), sideA, len(b), sideB)
}
