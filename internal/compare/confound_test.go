package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
)

func clone[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// realSide takes the runs of probe from the A/A exports, copied, with
// their snapshot copied and edited by setting (nil: unedited); ref edits
// every reference reading.
func realSide(t *testing.T, name string, aa []Side, probe string, setting func(*snapshot.Snapshot), ref func(*run.Reference), scale float64) Side {
	t.Helper()
	s := Side{Name: name, Snapshots: map[string]*snapshot.Snapshot{}}
	for i, src := range aa {
		for _, r0 := range src.Runs {
			if r0.Probe != probe {
				continue
			}
			r := clone(t, r0)
			r.ID = fmt.Sprintf("%s-%d", name, i)
			snap := clone(t, src.Snapshots[r0.SnapshotID])
			snap.ID = name + "-snap"
			r.SnapshotID = snap.ID
			if setting != nil {
				setting(snap)
			}
			s.Snapshots[snap.ID] = snap
			if ref != nil && r.Noise != nil {
				for _, nr := range []*run.NoiseReading{r.Noise.Before, r.Noise.After} {
					if nr != nil && nr.Reference != nil {
						ref(nr.Reference)
					}
				}
			}
			if scale != 1 {
				for j := range r.Samples {
					if m, _ := r.Metric(r.Samples[j].Metric); m.Better == run.Lower {
						r.Samples[j].Value *= scale
					} else {
						r.Samples[j].Value /= scale
					}
				}
			}
			s.Runs = append(s.Runs, r)
		}
	}
	return s
}

// Issue 28: a setting that moves a host-drift reference workload, when it
// differs, is the cause — the reference moving with it is no evidence of
// host drift. Real runs (testdata/aa) edited only in their settings and
// reference readings (and, in the "metrics slower" rows, in the samples
// the setting would slow).
func TestReferenceConfounding(t *testing.T) {
	aa := loadAA(t)
	// The runs whose reference readings were quiet on this loaded VM
	// (aa-4 and aa-8 for syscall, aa-3 and aa-6 for cpu), the same on both
	// sides: only the edits differ.
	runsOf := map[string][]Side{"syscall": {aa[1], aa[5]}, "cpu": {aa[0], aa[3]}}
	mitigations := func(v string) func(*snapshot.Snapshot) {
		return func(s *snapshot.Snapshot) {
			if s.Kernel.Params == nil {
				s.Kernel.Params = map[string]string{}
			}
			s.Kernel.Params["mitigations"] = v
		}
	}
	governor := func(g string) func(*snapshot.Snapshot) {
		return func(s *snapshot.Snapshot) { s.CPU.Governors = map[string][]int{g: {0, 1}} }
	}
	slowSyscall := func(r *run.Reference) { r.SyscallNs *= 1.6 }
	slowCPU := func(r *run.Reference) { r.CPUNsPerOp *= 1.4 }
	for _, c := range []struct {
		name       string
		probe      string
		a, b       func(*snapshot.Snapshot)
		ref        func(*run.Reference)
		scale      float64
		first      string  // knowledge entry of the first cause
		notNamed   string  // a cause that must not appear
		noteHas    string  // in the first cause's reference note
		confounded RefKind // reference marked confounded
	}{
		{"mitigations differ, syscall reference moved", "syscall", mitigations("off"), mitigations("auto"), slowSyscall, 1, "mitigations", "host-drift-syscall", "the syscall reference moved too", RefSyscall},
		{"mitigations differ, syscall reference and metrics slower", "syscall", mitigations("off"), mitigations("auto"), slowSyscall, 1.6, "mitigations", "host-drift-syscall", "mitigations change the cost", RefSyscall},
		{"governor differs, CPU reference moved", "cpu", governor("performance"), governor("powersave"), slowCPU, 1, "cpu-governor", "host-drift-cpu", "the cpu reference moved too", RefCPU},
		{"governor differs, CPU reference and metrics slower", "cpu", governor("performance"), governor("powersave"), slowCPU, 1.4, "cpu-governor", "host-drift-cpu", "the governor sets the core clock", RefCPU},
		{"nothing differs, syscall reference moved", "syscall", nil, nil, slowSyscall, 1, "host-drift-syscall", "mitigations", "", ""},
		{"nothing differs, CPU reference moved", "cpu", nil, nil, slowCPU, 1, "host-drift-cpu", "cpu-governor", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := realSide(t, "A", runsOf[c.probe], c.probe, c.a, nil, 1)
			b := realSide(t, "B", runsOf[c.probe], c.probe, c.b, c.ref, c.scale)
			cmp, err := Compare([]Side{a, b}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := cmp.Pairs[0]
			var knobs []string
			for _, cs := range p.Causes {
				knobs = append(knobs, cs.Knob)
			}
			if len(p.Causes) == 0 || p.Causes[0].Knob != c.first {
				t.Fatalf("causes %v, want %s first (host drift %+v)", knobs, c.first, p.HostDrift)
			}
			if slices.Contains(knobs, c.notNamed) {
				t.Errorf("causes %v name %s", knobs, c.notNamed)
			}
			if c.noteHas != "" && !strings.Contains(strings.Join(p.Causes[0].ReferenceMoved, "; "), c.noteHas) {
				t.Errorf("%s's note %q lacks %q", c.first, p.Causes[0].ReferenceMoved, c.noteHas)
			}
			for _, h := range p.HostDrift {
				if h.Kind == c.confounded && len(h.ConfoundedBy) == 0 {
					t.Errorf("%s reference not marked confounded: %+v", h.Kind, h)
				}
				if h.Kind != c.confounded && len(h.ConfoundedBy) > 0 {
					t.Errorf("%s reference marked confounded by %v", h.Kind, h.ConfoundedBy)
				}
			}
			for _, d := range p.Deltas {
				row := cmp.Metrics[d.Row]
				if c.confounded != "" && d.HostDrift && refKindOf(row.Probe, row.Metric, row.Unit) == c.confounded {
					t.Errorf("%s written off as host drift by a reference the setting moved", row.Metric)
				}
			}
			h := Headline(cmp, p)
			if c.confounded != "" && strings.Contains(h, "host ran") {
				t.Errorf("headline blames the host: %q", h)
			}
		})
	}
}
