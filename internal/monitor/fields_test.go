package monitor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// Every field of run.MonitorPoint is in the table, under its JSON name,
// and Get reads that very field: a value set by reflection comes back.
func TestFieldsCoverMonitorPoint(t *testing.T) {
	typ := reflect.TypeOf(run.MonitorPoint{})
	seen := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		sf := typ.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "t" {
			continue
		}
		f, ok := FieldByName(name)
		if !ok {
			t.Errorf("run.MonitorPoint.%s (%s) has no monitor.Field", sf.Name, name)
			continue
		}
		seen[name] = true
		var p run.MonitorPoint
		// A newer-monitor marker, so that avg10 fields count as measured.
		one := 1.0
		p.PSICPUPct, p.PSIMemoryPct, p.PSIIOPct = &one, &one, &one
		v := reflect.ValueOf(&p).Elem().Field(i)
		switch v.Kind() {
		case reflect.Float64:
			v.SetFloat(42)
		case reflect.Int64:
			v.SetInt(42)
		case reflect.Pointer:
			x := reflect.New(v.Type().Elem())
			switch x.Elem().Kind() {
			case reflect.Float64:
				x.Elem().SetFloat(42)
			case reflect.Int64:
				x.Elem().SetInt(42)
			}
			v.Set(x)
		}
		if got, ok := f.Get(p); !ok || got != 42 {
			t.Errorf("%s.Get = %v, %v; want 42 read from %s", name, got, ok, sf.Name)
		}
		if f.Fallback != "" {
			if _, ok := FieldByName(f.Fallback); !ok {
				t.Errorf("%s falls back to unknown field %s", name, f.Fallback)
			}
		}
	}
	if len(seen) != len(Fields) {
		t.Errorf("%d fields in the table, %d in run.MonitorPoint", len(Fields), len(seen))
	}
}

// Exact PSI when every series has it, avg10 when one was stored before it
// existed, never a mix.
func TestFieldInFallsBackForOldRuns(t *testing.T) {
	pct := 3.0
	cur := []run.MonitorPoint{{PSICPU: 20, PSICPUPct: &pct}}
	old := []run.MonitorPoint{{PSICPU: 30}}
	f := MustField("psi_cpu_pct")
	if g, ok := f.In(cur); !ok || g.Name != "psi_cpu_pct" {
		t.Errorf("newer run alone: %s %v", g.Name, ok)
	}
	g, ok := f.In(cur, old)
	if !ok || g.Name != "psi_cpu_avg10" {
		t.Fatalf("newer and older run: %s %v, want psi_cpu_avg10", g.Name, ok)
	}
	if v := g.Values(append(cur, old...)); len(v) != 2 || v[0] != 20 || v[1] != 30 {
		t.Errorf("avg10 values %v", v)
	}
}

// A newer point without the exact share had no pressure file: its avg10
// is a placeholder 0, not a reading.
func TestPlaceholderAvg10IsNotRead(t *testing.T) {
	kib := int64(100)
	newer := []run.MonitorPoint{{DirtyKiB: &kib}}
	if _, ok := MustField("psi_cpu_pct").In(newer); ok {
		t.Error("a series without PSI yields a PSI field")
	}
	if w := Warnings([]run.MonitorPoint{{DirtyKiB: &kib, PSICPU: 99}}); len(w) != 0 {
		t.Errorf("placeholder avg10 warned: %v", w)
	}
}
