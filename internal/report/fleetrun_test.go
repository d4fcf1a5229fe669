package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fleetrun"
	"github.com/perflab/perflab/internal/golden"
)

func TestFleetRunText(t *testing.T) {
	rep := &fleetrun.Report{Forks: 2, MaxOpenSessions: 2, Hosts: []fleetrun.Outcome{
		{Host: "web1", Address: "10.0.0.1:22", Status: fleetrun.Findings, Reason: "2 failing finding(s), worst high", Stored: []string{"snapshot x"}, Output: []byte(`{"a":1}`), Seconds: 1.25},
		{Host: "db9", Address: "10.0.0.9:22", Status: fleetrun.Unreachable, Reason: "no route to 10.0.0.9:22"},
	}}
	for _, f := range Formats(rep) {
		var b bytes.Buffer
		if err := Write(&b, rep, f, Options{}); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata/golden/fleetrun", "two-hosts."+f+".golden"), b.Bytes())
		if f != FormatText {
			continue
		}
		for _, want := range []string{"==> web1 (findings) <==", `"a": 1`, "db9", "unreachable", "no route to 10.0.0.9:22", "2 host(s), at most 2 at once (--forks 2): 1 findings, 1 unreachable"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("text lacks %q:\n%s", want, b.String())
			}
		}
	}
}

// The streaming writer prints what Write prints for the same run (text),
// and a JSON object that decodes to the same report, whichever order the
// hosts finished in; md is refused before anything runs.
func TestFleetRunWriterStreams(t *testing.T) {
	rep := &fleetrun.Report{Command: "audit --format json", Forks: 2, MaxOpenSessions: 2, Hosts: []fleetrun.Outcome{
		{Host: "web1", Address: "10.0.0.1:22", Status: fleetrun.Findings, Reason: "2 failing finding(s), worst high", Stored: []string{"snapshot x"}, Output: []byte(`{"a":1}`), Seconds: 1.25,
			Phases: &fleetrun.Phases{Connect: 0.1, Prepare: 0.2, Run: 0.9}},
		{Host: "db9", Address: "10.0.0.9:22", Status: fleetrun.AuthFailed, Reason: "permission denied"},
		{Host: "db10", Address: "10.0.0.10:22", Status: fleetrun.TimedOut, Reason: "not done after 1s (--host-timeout), connecting"},
	}}
	for _, format := range []string{FormatText, FormatJSON} {
		var whole, streamed bytes.Buffer
		if err := Write(&whole, rep, format, Options{}); err != nil {
			t.Fatal(err)
		}
		fw, err := NewFleetRunWriter(&streamed, format)
		if err != nil {
			t.Fatal(err)
		}
		rows := &fleetrun.Report{Command: rep.Command, Forks: rep.Forks, MaxOpenSessions: rep.MaxOpenSessions}
		for _, h := range rep.Hosts {
			if err := fw.Host(rows, h); err != nil {
				t.Fatal(err)
			}
			h.Output = nil
			rows.Hosts = append(rows.Hosts, h)
		}
		if err := fw.Close(rows); err != nil {
			t.Fatal(err)
		}
		if format == FormatText {
			if whole.String() != streamed.String() {
				t.Errorf("streamed text differs from Write's:\n%s\n---\n%s", streamed.String(), whole.String())
			}
			if !strings.Contains(streamed.String(), "1 findings, 1 auth failed, 1 timed out") {
				t.Errorf("summary lacks the new outcomes:\n%s", streamed.String())
			}
			continue
		}
		var a, b fleetrun.Report
		if err := json.Unmarshal(whole.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(streamed.Bytes(), &b); err != nil {
			t.Fatalf("streamed JSON: %v\n%s", err, streamed.String())
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("streamed JSON decodes to %+v, want %+v", b, a)
		}
	}
	var empty bytes.Buffer
	fw, _ := NewFleetRunWriter(&empty, FormatJSON)
	if err := fw.Close(&fleetrun.Report{Command: "x"}); err != nil || !json.Valid(empty.Bytes()) {
		t.Errorf("no hosts: %v, %q is not JSON", err, empty.String())
	}
	if _, err := NewFleetRunWriter(&empty, FormatMD); err == nil {
		t.Error("md accepted for a fleet run")
	}
}
