package report

import (
	"bytes"
	"path/filepath"
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
