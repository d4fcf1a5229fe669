package run

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/snapshot"
)

func testRun(id, snap string) *Run {
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	return &Run{
		Schema: Schema, ID: id, Label: "before", Suite: "quick", Probe: "cpu",
		ToolVersion: "dev", Params: map[string]string{"threads": "1"}, CPUs: "0",
		Host: "h1", SnapshotID: snap, Started: t0, Ended: t0.Add(5 * time.Second),
		Complete: true, Stop: StopPrecision, Precision: 0.01,
		Metrics: []Metric{{Name: "events_per_sec.t1", Unit: "events/s", Better: Higher, Series: "events_per_sec", X: 1, XUnit: "threads"}},
		Samples: []Sample{{Metric: "events_per_sec.t1", Value: 1000.5, Iteration: 0}, {Metric: "events_per_sec.t1", Value: 1001, Iteration: 1}},
		Monitor: []MonitorPoint{{T: 1, UserPct: 50, SystemPct: 1.5, CtxSwitches: 200, RunQueue: 2, MemAvailKiB: 1 << 20, PSICPU: 0.5}},
		Notes:   []string{"a note"},
	}
}

func testSnapshot(id string) *snapshot.Snapshot {
	return &snapshot.Snapshot{
		Schema: snapshot.Schema, ID: id, TakenAt: time.Date(2025, 3, 1, 9, 59, 0, 0, time.UTC),
		Root: "/", Perflab: "dev", Host: snapshot.Host{Hostname: "h1"},
		Sysctl: map[string]string{"vm.swappiness": "60"}, Services: map[string]snapshot.Service{},
		Tools: map[string]string{}, Unavailable: map[string]string{"cpu.governors": "no cpufreq"},
	}
}

func TestExportRoundTrip(t *testing.T) {
	in := Export{
		Runs:      []*Run{testRun("aaaa1111", "s1"), testRun("bbbb2222", "s1")},
		Snapshots: map[string]*snapshot.Snapshot{"s1": testSnapshot("s1")},
	}
	var buf bytes.Buffer
	if err := WriteExport(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadExport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Schema != Schema {
		t.Errorf("schema %d, want %d", out.Schema, Schema)
	}
	if !reflect.DeepEqual(out.Runs, in.Runs) {
		t.Errorf("runs differ after round trip:\n got %+v\nwant %+v", out.Runs[0], in.Runs[0])
	}
	if !reflect.DeepEqual(out.Snapshots["s1"], in.Snapshots["s1"]) {
		t.Errorf("snapshot differs after round trip")
	}
}

func TestReadExportRefuses(t *testing.T) {
	var good bytes.Buffer
	if err := WriteExport(&good, Export{Runs: []*Run{testRun("aaaa1111", "")}}); err != nil {
		t.Fatal(err)
	}
	snap := testSnapshot("s1")
	var snapJSON bytes.Buffer
	_ = snap.Encode(&snapJSON)

	cases := []struct {
		name, doc, want string
		newer           bool
	}{
		{"truncated", good.String()[:good.Len()/2], "not a perflab run export", false},
		{"empty", "", "not a perflab run export", false},
		{"snapshot file", snapJSON.String(), `no "kind"`, false},
		{"other kind", `{"kind":"something","schema":1}`, `kind is "something"`, false},
		{"no schema", `{"kind":"perflab-runs","runs":[]}`, `no "schema"`, false},
		{"newer schema", `{"kind":"perflab-runs","schema":99,"runs":[]}`, "schema 99", true},
		{"zero schema", `{"kind":"perflab-runs","schema":0,"runs":[]}`, "schema 0", false},
		{"wrong type", `{"kind":"perflab-runs","schema":1,"runs":{}}`, "corrupt run export", false},
		{"null run", `{"kind":"perflab-runs","schema":1,"runs":[null]}`, "run 0 is null", false},
		{"run without id", `{"kind":"perflab-runs","schema":1,"runs":[{"probe":"cpu"}]}`, "no id", false},
		{"undeclared metric", `{"kind":"perflab-runs","schema":1,"runs":[{"id":"a","probe":"cpu","samples":[{"metric":"x","value":1}]}]}`, `undeclared metric "x"`, false},
		{"bad direction", `{"kind":"perflab-runs","schema":1,"runs":[{"id":"a","probe":"cpu","metrics":[{"name":"x","better":"up"}]}]}`, `better is "up"`, false},
		{"duplicate run", `{"kind":"perflab-runs","schema":1,"runs":[{"id":"a","probe":"cpu"},{"id":"a","probe":"cpu"}]}`, "appears twice", false},
		{"newer run", `{"kind":"perflab-runs","schema":1,"runs":[{"schema":7,"id":"a","probe":"cpu"}]}`, "schema 7", true},
		{"snapshot id mismatch", `{"kind":"perflab-runs","schema":1,"runs":[],"snapshots":{"s2":` + snapJSON.String() + `}}`, `has id "s1"`, false},
		{"corrupt snapshot", `{"kind":"perflab-runs","schema":1,"runs":[],"snapshots":{"s1":{"id":"s1"}}}`, "snapshot s1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadExport(strings.NewReader(c.doc))
			if err == nil {
				t.Fatalf("accepted %s", c.name)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
			if errors.Is(err, ErrNewerSchema) != c.newer {
				t.Errorf("errors.Is(ErrNewerSchema) = %v, want %v", !c.newer, c.newer)
			}
		})
	}
}

func TestWriteExportRefusesInvalidRun(t *testing.T) {
	r := testRun("a", "")
	r.Samples = append(r.Samples, Sample{Metric: "nope", Value: 1})
	if err := WriteExport(&bytes.Buffer{}, Export{Runs: []*Run{r}}); err == nil {
		t.Fatal("exported a run with a sample of an undeclared metric")
	}
}

// FuzzReadExport: any input is either refused with an error or yields an
// export that writes and reads back to the same runs.
func FuzzReadExport(f *testing.F) {
	var good bytes.Buffer
	_ = WriteExport(&good, Export{Runs: []*Run{testRun("aaaa1111", "s1")}, Snapshots: map[string]*snapshot.Snapshot{"s1": testSnapshot("s1")}})
	f.Add(good.Bytes())
	f.Add([]byte(`{"kind":"perflab-runs","schema":1,"runs":[{"id":"a","probe":"cpu","metrics":[{"name":"x","better":"lower"}],"samples":[{"metric":"x","value":1e308}]}]}`))
	f.Add([]byte(`{"kind":"perflab-runs","schema":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ReadExport(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteExport(&buf, *e); err != nil {
			t.Fatalf("read an export that cannot be written back: %v", err)
		}
		e2, err := ReadExport(&buf)
		if err != nil {
			t.Fatalf("written export does not read back: %v", err)
		}
		if len(e2.Runs) != len(e.Runs) || len(e2.Snapshots) != len(e.Snapshots) {
			t.Fatalf("round trip changed the number of runs or snapshots")
		}
	})
}
