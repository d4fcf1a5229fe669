package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// textfile audits a fixture tree and renders the textfile metrics.
func textfile(t *testing.T, tree, workload string) ([]byte, []audit.Finding) {
	t.Helper()
	fs, err := hostfs.New(fixture.Dir(tree))
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := audit.LookupWorkload(workload)
	if err != nil {
		t.Fatal(err)
	}
	findings := audit.Run(s, w)
	var b bytes.Buffer
	if err := WriteText(&b, NewRegistry("v9.9.9", s, w.Name, findings)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), findings
}

func parse(t *testing.T, data []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("textfile does not parse: %v\n%s", err, data)
	}
	return mfs
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestTextfileFindings(t *testing.T) {
	data, findings := textfile(t, "metal", "web")
	mfs := parse(t, data)
	rf := mfs["perflab_audit_rule_failed"]
	if rf == nil || rf.GetType() != dto.MetricType_GAUGE {
		t.Fatalf("no gauge perflab_audit_rule_failed in\n%s", data)
	}
	if len(rf.Metric) != len(audit.Rules()) {
		t.Errorf("%d rule series, want one per rule (%d)", len(rf.Metric), len(audit.Rules()))
	}
	want := map[string]audit.Finding{}
	for _, f := range findings {
		want[f.Rule] = f
	}
	failed := 0
	for _, m := range rf.Metric {
		l := labels(m)
		f, ok := want[l["rule"]]
		if !ok {
			t.Errorf("series for unknown rule %v", l)
			continue
		}
		v := m.GetGauge().GetValue()
		if (v == 1) != (f.Status == audit.Fail) || (v != 0 && v != 1) {
			t.Errorf("%s: value %v for status %s", f.Rule, v, f.Status)
		}
		if l["severity"] != f.Severity.String() || l["workload"] != "web" || l["area"] != f.Area {
			t.Errorf("%s: labels %v", f.Rule, l)
		}
		if v == 1 {
			failed++
		}
	}
	// metal runs powersave: CPU-GOVERNOR fails for web.
	if failed == 0 {
		t.Error("no failing rule on metal for web")
	}
	counts := map[string]float64{}
	for _, m := range mfs["perflab_audit_findings"].GetMetric() {
		counts[labels(m)["status"]] = m.GetGauge().GetValue()
	}
	if counts["fail"] != float64(failed) || counts["pass"]+counts["fail"]+counts["na"]+counts["error"] != float64(len(findings)) {
		t.Errorf("status counts %v for %d findings, %d failed", counts, len(findings), failed)
	}
	bi := mfs["perflab_build_info"]
	if bi == nil || labels(bi.Metric[0])["version"] != "v9.9.9" || bi.Metric[0].GetGauge().GetValue() != 1 {
		t.Errorf("build info: %v", bi)
	}
}

// enumValues returns label value → sample value for an enum family,
// restricted to series whose other labels match.
func enumValues(mf *dto.MetricFamily, label string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		l := labels(m)
		ok := true
		for k, v := range match {
			if l[k] != v {
				ok = false
			}
		}
		if ok {
			out[l[label]] = m.GetGauge().GetValue()
		}
	}
	return out
}

func oneHot(t *testing.T, name string, vals map[string]float64, want string) {
	t.Helper()
	if len(vals) < 2 {
		t.Errorf("%s: enum has %d values: %v", name, len(vals), vals)
	}
	for k, v := range vals {
		if (k == want) != (v == 1) {
			t.Errorf("%s: %s=%v, want only %s set", name, k, v, want)
		}
	}
}

func TestTextfileKnobs(t *testing.T) {
	mfs := parse(t, must(textfile(t, "metal", "general")))
	oneHot(t, "thp_enabled", enumValues(mfs["perflab_thp_enabled"], "mode", nil), "madvise")
	oneHot(t, "thp_defrag", enumValues(mfs["perflab_thp_defrag"], "mode", nil), "madvise")
	oneHot(t, "clocksource", enumValues(mfs["perflab_clocksource"], "clocksource", nil), "tsc")
	oneHot(t, "governor cpu7", enumValues(mfs["perflab_cpu_scaling_governor"], "governor", map[string]string{"cpu": "7"}), "powersave")
	oneHot(t, "mitigations", enumValues(mfs["perflab_kernel_mitigations"], "state", nil), "auto")
	oneHot(t, "mmio_stale_data", enumValues(mfs["perflab_cpu_vulnerability"], "state", map[string]string{"vulnerability": "mmio_stale_data"}), "mitigated")
	if n := len(enumValues(mfs["perflab_cpu_scaling_governor"], "cpu", map[string]string{"governor": "powersave"})); n != 8 {
		t.Errorf("governor series for %d CPUs, want 8", n)
	}

	// A VM without cpufreq publishes no governor series rather than zeros.
	kvm := parse(t, must(textfile(t, "kvm", "general")))
	if _, ok := kvm["perflab_cpu_scaling_governor"]; ok {
		t.Error("governor series on a host without cpufreq")
	}
}

func must(b []byte, _ []audit.Finding) []byte { return b }

// Defect 3, on prometheus/procfs's tree: itlb_multihit reads "KVM:
// Mitigation: VMX unsupported", which is mitigated, not unknown.
func TestVulnerabilityStateProcfsTree(t *testing.T) {
	data, _ := textfile(t, "procfs", "general")
	mfs := parse(t, data)
	state := map[string]string{}
	for _, m := range mfs["perflab_cpu_vulnerability"].GetMetric() {
		if m.GetGauge().GetValue() == 1 {
			l := labels(m)
			state[l["vulnerability"]] = l["state"]
		}
	}
	for name, want := range map[string]string{
		"itlb_multihit": "mitigated", "mds": "vulnerable", "srbds": "unknown",
		"tsx_async_abort": "not_affected", "mmio_stale_data": "vulnerable",
	} {
		if state[name] != want {
			t.Errorf("%s: state %q, want %q (all: %v)", name, state[name], want, state)
		}
	}
}

// promtool is what operators run on textfiles; it must accept ours with no
// lint complaint.
func TestPromtoolAcceptsTextfile(t *testing.T) {
	promtool := testenv.RequireTool(t, "promtool")
	for _, tree := range []string{"metal", "kvm", "kunpeng", "procfs", "node_exporter"} {
		data, _ := textfile(t, tree, "web")
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(data)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%s: promtool check metrics: %v\n%s", tree, err, out)
		}
	}
}

// An empty collector (before the first Update) reports nothing and a
// registry without a snapshot holds only the build info.
func TestEmptyCollectors(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, NewRegistry("dev", nil, "", nil)); err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, b.Bytes())
	if len(mfs) != 1 || mfs["perflab_build_info"] == nil {
		t.Errorf("families %v", mfs)
	}
}

// A corrupt sysfs file yields a knob value that is not UTF-8; the
// exposition must still render (the value repaired), not fail with a
// collector panic for the whole textfile.
func TestInvalidUTF8KnobValue(t *testing.T) {
	fs, err := hostfs.New(fixture.Dir("metal"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.Collect(fs, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Memory.THP.Enabled = "alw\xffays"
	s.Kernel.Clocksource = "\x87tsc"
	var b bytes.Buffer
	if err := WriteText(&b, NewRegistry("dev", s, "general", nil)); err != nil {
		t.Fatalf("WriteText with a non-UTF-8 knob value: %v", err)
	}
	mfs := parse(t, b.Bytes())
	oneHot(t, "thp_enabled", enumValues(mfs["perflab_thp_enabled"], "mode", nil), "alw\uFFFDays")
	oneHot(t, "clocksource", enumValues(mfs["perflab_clocksource"], "clocksource", nil), "\uFFFDtsc")
}
