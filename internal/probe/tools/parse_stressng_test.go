package tools

import "testing"

func TestParseStressNG(t *testing.T) {
	r, err := ParseStressNG(fixture(t, "stress-ng", "0.15.06-cpu.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "0.15.06" {
		t.Errorf("version %q", r.Version)
	}
	wantNear(t, "cpu bogo-ops/s real", r.Stressors["cpu"].BogoOpsPerSecReal, 3608.858891)
	wantNear(t, "cpu-usage-per-instance kept as extra", r.Stressors["cpu"].Extra["cpu-usage-per-instance"], 61.760085)
	r, err = ParseStressNG(fixture(t, "stress-ng", "0.15.06-switch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "switch ns per context switch", r.Stressors["switch"].Extra["nanosecs-per-context-switch-pipe-method"], 4218.995706)
}

// 0.09: only the six classic keys, an unquoted '#' in system-info.
func TestParseStressNG009(t *testing.T) {
	r, err := ParseStressNG(fixture(t, "stress-ng", "0.09.23-matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "0.09.23" {
		t.Errorf("version %q", r.Version)
	}
	m := r.Stressors["matrix"]
	wantNear(t, "matrix bogo-ops/s real", m.BogoOpsPerSecReal, 4737.958375)
	wantNear(t, "matrix wall clock", m.WallSeconds, 10.000510)
	if len(m.Extra) != 2 { // user-time, system-time
		t.Errorf("extra %v", m.Extra)
	}
}

func TestParseStressNGFailures(t *testing.T) {
	for _, f := range []string{"0.09.23-nometrics.yaml", "0.15.06-truncated.yaml", "0.15.06-badmethod.txt"} {
		if _, err := ParseStressNG(fixture(t, "stress-ng", f)); err == nil {
			t.Errorf("%s parsed", f)
		}
	}
}

func FuzzParseStressNG(f *testing.F) {
	seedFixtures(f, "stress-ng")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseStressNG(b)
		if err == nil && len(r.Stressors) == 0 {
			t.Fatal("success without stressors")
		}
	})
}
