package monitor

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/run"
)

// The kvm fixture's /proc/pressure/cpu was copied right after a CPU-heavy
// run: avg10 27.99%. In `perflab bench quick` that is the state in which
// the next, single-threaded probe starts: the decaying average still shows
// the previous probe's load while nothing waits for a CPU any more. The
// stall total does not advance, so the exact share is 0 and no "host busy"
// note is made; a run stored with avg10 only still gets it.
func TestExactPressureHasNoLag(t *testing.T) {
	cpuPSI := readFile(t, filepath.Join(fixture.Dir("kvm"), "proc", "pressure", "cpu"))
	if !strings.Contains(cpuPSI, "some avg10=27.99 avg60=29.13 avg300=12.64 total=85695993") {
		t.Fatalf("fixture changed: %q", cpuPSI)
	}
	fs := fixture.Tree(t, "kvm", nil)
	s, err := New(fs)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	var points []run.MonitorPoint
	prev, err := s.Read(t0)
	if err != nil {
		t.Fatal(err)
	}
	// Five quiet seconds: avg10 decays (×0.9 a second here), the total
	// stays where it was.
	avg10 := []string{"25.19", "22.67", "20.40", "18.36", "16.52"}
	for i, a := range avg10 {
		edit(t, fs, "proc/pressure/cpu", strings.Replace(cpuPSI, "avg10=27.99", "avg10="+a, 1))
		cur, err := s.Read(t0.Add(time.Duration(i+1) * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		points = append(points, Point(prev, cur, t0))
		prev = cur
	}
	for i, p := range points {
		if p.PSICPUPct == nil || *p.PSICPUPct != 0 {
			t.Errorf("second %d: psi_cpu_pct = %v, want 0: no task waited", i+1, p.PSICPUPct)
		}
	}
	if points[0].PSICPU != 25.19 {
		t.Errorf("psi_cpu_avg10 = %v, want the kernel's 25.19 kept", points[0].PSICPU)
	}
	// The first second after the busy probe: avg10 is still above the
	// 25% threshold.
	if w := strings.Join(Warnings(points[:1]), "\n"); strings.Contains(w, "waited for a CPU") {
		t.Errorf("a quiet interval after a busy one warned: %s", w)
	}
	// The same series as a run stored before psi_cpu_pct existed: that
	// monitor recorded none of the newer fields. (A point that has some of
	// them but no psi_cpu_pct had no CPU pressure file, and its avg10 is a
	// placeholder 0: see TestPlaceholderAvg10IsNotRead.)
	old := make([]run.MonitorPoint, 1)
	for i, p := range points[:1] {
		old[i] = run.MonitorPoint{T: p.T, UserPct: p.UserPct, SystemPct: p.SystemPct, RunQueue: p.RunQueue,
			PSICPU: p.PSICPU, PSIMemory: p.PSIMemory, PSIIO: p.PSIIO}
	}
	if w := strings.Join(Warnings(old), "\n"); !strings.Contains(w, "waited for a CPU 25% of the time") {
		t.Errorf("avg10 fallback for stored runs: %q", w)
	}

	// Now 0.6 s of stall in a 2-second interval: exactly 30%, whatever
	// avg10 says.
	edit(t, fs, "proc/pressure/cpu", strings.Replace(cpuPSI, "total=85695993", "total=86295993", 1))
	cur, err := s.Read(t0.Add(7 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	p := Point(prev, cur, t0)
	if p.PSICPUPct == nil || !near(*p.PSICPUPct, 30) {
		t.Errorf("psi_cpu_pct = %v, want 30", p.PSICPUPct)
	}
	if w := strings.Join(Warnings([]run.MonitorPoint{p}), "\n"); !strings.Contains(w, "waited for a CPU 30% of the time") {
		t.Errorf("warnings: %q", w)
	}
}

func TestStallPct(t *testing.T) {
	on := func(us uint64) Stall { return Stall{TotalUs: us, OK: true} }
	cases := []struct {
		name string
		a, b Stall
		dt   float64
		want *float64
	}{
		{"quarter", on(1e6), on(1.5e6), 2, ptr(25.0)},
		{"read latency past 100%", on(0), on(1000050), 1, ptr(100.0)},
		{"counter went backwards", on(5e6), on(1e6), 1, ptr(0.0)},
		{"no PSI before", Stall{}, on(1e6), 1, nil},
		{"no PSI after", on(1e6), Stall{}, 1, nil},
		{"no time passed", on(1), on(2), 0, nil},
	}
	for _, c := range cases {
		got := stallPct(c.a, c.b, c.dt)
		if (got == nil) != (c.want == nil) || (got != nil && !near(*got, *c.want)) {
			t.Errorf("%s: %v, want %v", c.name, show(got), show(c.want))
		}
	}
}

func show(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

// edit replaces a file in a fixture copy (by rename: the sampler may be
// reading it).
func edit(t *testing.T, fs interface{ Root() string }, p, content string) {
	t.Helper()
	write(t, fs.Root(), p, content)
}
