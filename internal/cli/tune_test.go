package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/tune"
)

// TestTuneCycleOnFakeRoot drives plan → apply → verify → drift → revert
// through the CLI against a copy of the metal tree.
func TestTuneCycleOnFakeRoot(t *testing.T) {
	fs := fixture.Tree(t, "metal", nil)
	root := fs.Root()
	gov := "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor"

	code, out, _ := runCLI(t, "tune", "plan", "web", "--root", root)
	if code != 0 || !strings.Contains(out, gov+": powersave → performance") || !strings.Contains(out, "By hand") {
		t.Fatalf("plan (exit %d):\n%s", code, out)
	}
	// Not on a terminal: refuses without --yes and changes nothing.
	if code, _, errs := runCLI(t, "tune", "apply", "web", "--root", root); code != 2 || !strings.Contains(errs, "--yes") {
		t.Fatalf("apply without --yes: exit %d, %s", code, errs)
	}
	if v, _ := fs.ReadString(gov); v != "powersave" {
		t.Fatalf("governor changed without --yes: %s", v)
	}
	if code, _, errs := runCLI(t, "tune", "apply", "web", "--root", root, "--yes"); code != 0 {
		t.Fatalf("apply: exit %d, %s", code, errs)
	}
	if v, _ := fs.ReadString(gov); v != "performance" {
		t.Fatalf("governor after apply: %s", v)
	}
	if code, out, _ := runCLI(t, "tune", "verify", "--root", root); code != 0 || strings.Contains(out, "DRIFT") {
		t.Fatalf("verify after apply: exit %d\n%s", code, out)
	}
	if err := fs.WriteFile(gov, []byte("powersave\n")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, "tune", "verify", "--root", root, "--format", "json")
	var drift []tune.Drift
	if code != 1 || json.Unmarshal([]byte(out), &drift) != nil {
		t.Fatalf("verify with drift: exit %d\n%s", code, out)
	}
	bad := 0
	for _, d := range drift {
		if !d.OK {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("%d drifted knobs, want 1", bad)
	}
	if code, out, _ := runCLI(t, "tune", "status", "--root", root); code != 0 || !strings.Contains(out, "tune apply web") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	if code, _, errs := runCLI(t, "tune", "revert", "--root", root); code != 0 {
		t.Fatalf("revert: exit %d %s", code, errs)
	}
	if v, _ := fs.ReadString("/proc/sys/net/core/somaxconn"); v != "4096" {
		t.Errorf("somaxconn after revert: %s", v)
	}
	if code, out, _ := runCLI(t, "tune", "verify", "--root", root); code != 0 || !strings.Contains(out, "Nothing applied") {
		t.Errorf("verify after revert: exit %d\n%s", code, out)
	}
}

func TestTuneBadInput(t *testing.T) {
	root := fixture.Tree(t, "metal", nil).Root()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tune", "plan", "nosuch", "--root", root}, 2, "unknown workload"},
		{[]string{"tune", "plan", "web", "--root", t.TempDir()}, 2, "--root"},
		{[]string{"tune", "plan", "web", "--root", root, "--format", "yaml"}, 2, "--format"},
		{[]string{"tune", "plan", "--root", root}, 2, "accepts 1 arg"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

func TestIrqShowAndPin(t *testing.T) {
	fs := fixture.Tree(t, "metal", nil)
	root := fs.Root()
	code, out, _ := runCLI(t, "irq", "show", "eth0", "--root", root)
	if code != 0 || !strings.Contains(out, "NUMA node 1") || !strings.Contains(out, "off the NIC's node") || !strings.Contains(out, "irqbalance is running") {
		t.Fatalf("irq show (exit %d):\n%s", code, out)
	}
	if code, _, errs := runCLI(t, "irq", "pin", "eth0", "--cpus", "4-7", "--rps", "--root", root); code != 2 || !strings.Contains(errs, "--yes") {
		t.Fatalf("pin without --yes: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "irq", "pin", "eth0", "--cpus", "4-7", "--rps", "--yes", "--root", root); code != 0 {
		t.Fatalf("pin: %d %s", code, errs)
	}
	_, out, _ = runCLI(t, "irq", "show", "eth0", "--root", root, "--format", "json")
	var views report.IRQViews
	if err := json.Unmarshal([]byte(out), &views); err != nil || len(views) != 1 {
		t.Fatalf("irq show json: %v\n%s", err, out)
	}
	for _, q := range views[0].IRQs {
		if q.OffNode {
			t.Errorf("IRQ %d still off the NIC's node after pin: CPUs %s", q.IRQ, q.CPUs)
		}
	}
	if code, _, _ := runCLI(t, "tune", "revert", "--root", root); code != 0 {
		t.Fatal("revert after pin failed")
	}
	_, out, _ = runCLI(t, "irq", "show", "eth0", "--root", root)
	if !strings.Contains(out, "off the NIC's node") {
		t.Errorf("revert did not restore the original affinity:\n%s", out)
	}
	for _, args := range [][]string{
		{"irq", "pin", "eth0", "--cpus", "x", "--root", root},
		{"irq", "pin", "eth9", "--cpus", "1", "--root", root},
		{"irq", "show", "eth9", "--root", root},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
