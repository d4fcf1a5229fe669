package run

import "testing"

func TestSameMeasurement(t *testing.T) {
	base := &Run{Probe: "cpu", Params: map[string]string{"threads": "2", "seconds": "5"}, Host: "a", Label: "x"}
	cases := []struct {
		name string
		o    *Run
		same bool
	}{
		{"other host, label, state and key order", &Run{Probe: "cpu", Params: map[string]string{"seconds": "5", "threads": "2"}, Host: "b", Label: "y", State: "s"}, true},
		{"other parameter value", &Run{Probe: "cpu", Params: map[string]string{"threads": "1", "seconds": "5"}}, false},
		{"pinned", &Run{Probe: "cpu", Params: map[string]string{"threads": "2", "seconds": "5"}, CPUs: "0"}, false},
		{"other probe", &Run{Probe: "memory.latency", Params: map[string]string{"threads": "2", "seconds": "5"}}, false},
		{"a parameter missing", &Run{Probe: "cpu", Params: map[string]string{"threads": "2"}}, false},
	}
	for _, c := range cases {
		if got := base.SameMeasurement(c.o); got != c.same {
			t.Errorf("%s: SameMeasurement %v, want %v (%q vs %q)", c.name, got, c.same, base.MeasurementKey(), c.o.MeasurementKey())
		}
	}
	if got, want := (&Run{Params: map[string]string{"b": "2", "a": "1"}, CPUs: "0-1"}).ParamKey(), "a=1 b=2 cpus=0-1"; got != want {
		t.Errorf("ParamKey %q, want %q", got, want)
	}
}
