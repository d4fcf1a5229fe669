package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixrun"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/termfmt"
)

const cpufreqNote = "monitor: cpufreq is unavailable (no scaling_cur_freq); cpu_mhz is not recorded"

// The quick suite's host-level note is printed once, after the runs; a
// note of one run stays under it. Markdown does the same.
func TestBenchReportNotesOnce(t *testing.T) {
	noiseNote := "host noise: the hypervisor or other tasks took 1.6% of an otherwise idle CPU's time (before 1.1%, after 2.1%; longest gap 4.2 ms)"
	var runs []*run.Run
	for i, p := range []string{"cpu", "memory.latency", "syscall"} {
		r := fixrun.Run(strings.Repeat(string(rune('a'+i)), 16), p, cpufreqNote)
		if p == "memory.latency" {
			r.Notes = append(r.Notes, noiseNote)
			r.Noise = fixrun.NoisyNoise()
		}
		runs = append(runs, r)
	}

	var b bytes.Buffer
	if err := Bench(&b, runs, "text", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, cpufreqNote); n != 1 {
		t.Errorf("the shared note is printed %d times, want once:\n%s", n, out)
	}
	shared := strings.Index(out, "for every run:\n  note: "+cpufreqNote)
	if shared < 0 || shared < strings.LastIndex(out, "syscall  run") {
		t.Errorf("the shared note is not under 'for every run:' after the runs:\n%s", out)
	}
	own := strings.Index(out, "  note: "+noiseNote)
	if own < 0 || own < strings.Index(out, "memory.latency  run") || own > strings.Index(out, "syscall  run") {
		t.Errorf("the noise note is not under its run:\n%s", out)
	}
	// The note is the only mention of the noise in the session report.
	if n := strings.Count(out, "host noise"); n != 1 {
		t.Errorf("host noise is mentioned %d times, want once (the note):\n%s", n, out)
	}
	for _, r := range runs {
		if len(r.Notes) == 0 || r.Notes[0] != cpufreqNote {
			t.Errorf("the report changed run %s's notes: %q", r.Probe, r.Notes)
		}
	}

	b.Reset()
	if err := Bench(&b, runs, "md", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	mdNote := `monitor: cpufreq is unavailable (no scaling\_cur\_freq); cpu\_mhz is not recorded`
	if strings.Count(md, mdNote) != 1 || !strings.Contains(md, "For every run:\n\n- "+mdNote) {
		t.Errorf("md: the shared note is not once under 'For every run:':\n%s", md)
	}
	if !strings.Contains(md, "- memory.latency (run bbbbbbbbbbbb): host noise:") {
		t.Errorf("md: the run's own note is missing:\n%s", md)
	}

	// JSON keeps every note with every run, and the noise readings.
	b.Reset()
	if err := Bench(&b, runs, "json", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	var doc []struct {
		Notes []string
		Noise *run.Noise
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc) != 3 {
		t.Fatalf("json: %v\n%s", err, b.String())
	}
	for i, d := range doc {
		if len(d.Notes) == 0 || d.Notes[0] != cpufreqNote {
			t.Errorf("json run %d notes %q, want the shared note too", i, d.Notes)
		}
	}
	if doc[0].Noise != nil || doc[1].Noise == nil || doc[1].Noise.After.MaxGapUs != 4200 || doc[1].Noise.Before.InterruptionsPerS != 19 {
		t.Errorf("json noise: %+v %+v", doc[0].Noise, doc[1].Noise)
	}
}

// A single run prints its notes with it, with no 'for every run' section.
func TestBenchReportSingleRunNotes(t *testing.T) {
	var b bytes.Buffer
	if err := Bench(&b, []*run.Run{fixrun.Run("aaaa", "cpu", cpufreqNote)}, "text", termfmt.Style{}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "for every run") || !strings.Contains(out, "  note: "+cpufreqNote) {
		t.Errorf("single run:\n%s", out)
	}
}
