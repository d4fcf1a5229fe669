package snapshot

import (
	"fmt"
	"math"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestLoadShares(t *testing.T) {
	// Ticks summing to 2000: user+nice 800, system 100, idle 800, iowait
	// 100, irq 50, softirq 50, steal 100 (guest columns are already in user).
	stat := "cpu  600 200 100 800 100 50 50 100 30 0\ncpu0 600 200 100 800 100 50 50 100 30 0\nintr 0\nctxt 1\nbtime 1\nprocesses 10\nprocs_running 3\nprocs_blocked 2\n"
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/proc/stat": stat}), Options{}, collectLoad)
	l := s.Load
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"user", l.UserPct, 40}, {"system", l.SystemPct, 5}, {"idle", l.IdlePct, 40},
		{"iowait", l.IOWaitPct, 5}, {"irq", l.IRQPct, 2.5}, {"softirq", l.SoftIRQPct, 2.5}, {"steal", l.StealPct, 5},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v%%, want %v%%", c.name, c.got, c.want)
		}
	}
	wantEq(t, "running/blocked", []int64{l.ProcsRunning, l.ProcsBlocked}, []int64{3, 2})
}

func TestLoadKVM(t *testing.T) {
	fs := tree(t, "kvm", nil)
	s := runAreas(t, fs, Options{}, collectLoad)
	l := s.Load
	// The kvm tree is a copy of a live host, so expectations come from its
	// files, read here with Sscanf rather than the collector's parsers.
	var l1, l5 float64
	la, _ := fs.ReadString("/proc/loadavg")
	if _, err := fmt.Sscanf(la, "%g %g", &l1, &l5); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "loadavg", []float64{l.LoadAvg1, l.LoadAvg5}, []float64{l1, l5})
	var want PSI
	psi, _ := fs.ReadString("/proc/pressure/cpu")
	if _, err := fmt.Sscanf(psi, "some avg10=%g avg60=%g avg300=%g total=%d", &want.Avg10, &want.Avg60, new(float64), &want.Total); err != nil {
		t.Fatal(err)
	}
	wantEq(t, "psi cpu", l.PSI["cpu"], want)
	wantEq(t, "psi resources", len(l.PSI), 3)
	if l.StealPct <= 0 || l.StealPct >= 5 {
		t.Errorf("steal = %v%%, want the small non-zero share the kvm /proc/stat shows", l.StealPct)
	}
}

func TestLoadNoPSI(t *testing.T) {
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/proc/pressure": fixture.Delete}), Options{}, collectLoad)
	wantMissing(t, s, "load.psi.cpu", "predates 4.20")
	wantMissing(t, s, "load.psi.io", "")
	if s.Load.PSI != nil {
		t.Errorf("psi = %v without pressure files", s.Load.PSI)
	}
}

func TestLoadCorruptLoadavg(t *testing.T) {
	s := runAreas(t, overlay(t, "kvm", map[string]string{"/proc/loadavg": "0.5 x\n"}), Options{}, collectLoad)
	wantMissing(t, s, "load.loadavg1", "/proc/loadavg")
	wantPresent(t, s, "load.user_pct")
}

func TestParseLoadavg(t *testing.T) {
	l, err := parseLoadavg("3.12 2.87 2.40 4/1203 98211")
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "loadavg", l, loadavg{3.12, 2.87, 2.40, 4, 1203})
	for _, bad := range []string{"", "1 2 3", "1 2 3 4", "1 2 3 a/b 5", "x 2 3 1/2 5"} {
		if _, err := parseLoadavg(bad); err == nil {
			t.Errorf("parseLoadavg(%q) succeeded", bad)
		}
	}
}
