package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFleetReportCLI(t *testing.T) {
	db := fleetHistory(t)
	code, out, errs := runCLI(t, "fleet", "report", "--db", db, "--format", "json", "--label", "after")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Hosts []struct {
			Name string `json:"name"`
			Runs int    `json:"runs"`
		} `json:"hosts"`
		Metrics []struct {
			TooFew bool `json:"too_few_hosts"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Hosts) != 1 || rep.Hosts[0].Name != "h1" || rep.Hosts[0].Runs != 8 || len(rep.Metrics) != 1 || !rep.Metrics[0].TooFew {
		t.Fatalf("report = %+v, want h1 with its 8 'after' runs and too few hosts for outliers", rep)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "2030-01-01"}, "no runs since 2030-01-01"},
		{[]string{"--since", "yesterday"}, `cannot read --since "yesterday"`},
		{[]string{"--format", "csv"}, "unknown --format"},
		{[]string{"--workload", "nosuch"}, "nosuch"},
	} {
		code, _, errs := runCLI(t, append([]string{"fleet", "report", "--db", db}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":           {},
		"7d":         now.AddDate(0, 0, -7),
		"36h":        now.Add(-36 * time.Hour),
		"2026-11-01": time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-3d", "soon", "-1h"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}

// FuzzParseSince: any --since either is refused with a usage error or
// names a time no later than now.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"", "7d", "36h", "2026-11-01", "2026-11-01T10:00:00Z", "-3d", "9999999999999d", "1h-2m"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err != nil {
			if !strings.Contains(err.Error(), "--since") {
				t.Fatalf("parseSince(%q) error does not name the flag: %v", s, err)
			}
			return
		}
		if strings.HasSuffix(s, "d") || strings.HasSuffix(s, "h") || strings.HasSuffix(s, "m") || strings.HasSuffix(s, "s") {
			if got.After(now) {
				t.Fatalf("parseSince(%q) = %v, after now", s, got)
			}
		}
	})
}
