package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/golden"
)

// loadFleet reads a fleet report stored by internal/fleet's golden test
// (testdata/fleet/NAME.json: a host with a CPU quota; a CPU-model lottery).
func loadFleet(t *testing.T, name string) *fleet.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/fleet", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r fleet.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestFleetGolden(t *testing.T) {
	for _, name := range []string{"quota", "lottery"} {
		r := loadFleet(t, name)
		for _, f := range Formats(r) {
			var b bytes.Buffer
			if err := Write(&b, r, f, Options{}); err != nil {
				t.Fatal(err)
			}
			ext := f
			if f == FormatText {
				ext = "txt"
			}
			golden.Check(t, filepath.Join("testdata/golden/fleet", name+"."+ext+".golden"), b.Bytes())
		}
	}
}

// Every format names the outlier host and its separating fact; the HTML
// comes from the page shell and escapes what hosts report.
func TestFleetFormatsAgree(t *testing.T) {
	r := loadFleet(t, "quota")
	var outlier string
	for _, m := range r.Metrics {
		if len(m.Outliers) > 0 {
			outlier = m.Outliers[0].Hosts[0]
		}
	}
	if outlier == "" {
		t.Fatal("fixture has no outlier")
	}
	r.Hosts[0].CPUModel = "<script>alert(1)</script>"
	for _, f := range []string{FormatText, FormatMD, FormatHTML} {
		var b bytes.Buffer
		if err := Write(&b, r, f, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), outlier) || !strings.Contains(b.String(), "separated by") {
			t.Errorf("%s lacks the outlier %s or its separating fact", f, outlier)
		}
		if f == FormatHTML && (strings.Contains(b.String(), "<script>alert") || !strings.Contains(b.String(), html.EscapeString(CSP))) {
			t.Errorf("fleet HTML is not the escaped page shell")
		}
	}
	// Without snapshots every format still renders, saying so.
	bare := &fleet.Report{Hosts: []fleet.Host{{Name: "slow", Runs: 3}}}
	for _, f := range Formats(bare) {
		var b bytes.Buffer
		if err := Write(&b, bare, f, Options{}); err != nil {
			t.Fatal(err)
		}
		if f == FormatText && !strings.Contains(b.String(), "(no snapshot stored)") {
			t.Errorf("text should say the host has no snapshot:\n%s", b.String())
		}
	}
}
