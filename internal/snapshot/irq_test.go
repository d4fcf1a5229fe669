package snapshot

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/prometheus/procfs"
)

func TestIRQMetal(t *testing.T) {
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectIRQ)
	q := irqNamed(s, "104")
	if q == nil {
		t.Fatalf("IRQ 104 missing; got %d IRQs", len(s.IRQs))
	}
	wantEq(t, "chip", q.Chip, "IR-PCI-MSI")
	wantEq(t, "actions", q.Actions, "i40e-eth0-TxRx-3")
	wantEq(t, "affinity", q.Affinity, []int{0, 1, 2, 3})
	wantEq(t, "effective", q.Effective, []int{3})
	wantEq(t, "node", q.Node, 1)
	wantEq(t, "per-CPU", q.PerCPU, []uint64{0, 0, 0, 48626258, 0, 0, 0, 0})
	wantEq(t, "total", q.Total, uint64(48626258))

	wantEq(t, "timer actions", irqNamed(s, "0").Actions, "timer")
	wantEq(t, "acpi actions", irqNamed(s, "9").Actions, "acpi")

	loc := irqNamed(s, "LOC")
	wantEq(t, "LOC description", loc.Actions, "Local timer interrupts")
	wantEq(t, "LOC per-CPU count", len(loc.PerCPU), 8)
	wantEq(t, "LOC has no affinity", loc.Affinity, []int(nil))
	err := irqNamed(s, "ERR")
	wantEq(t, "ERR per-CPU", err.PerCPU, []uint64(nil))

	// Numbered IRQs in numeric order, then the named lines.
	wantEq(t, "first", s.IRQs[0].Number, "0")
	wantEq(t, "9 before 24", irqLess("9", "24"), true)
	if last := s.IRQs[len(s.IRQs)-1].Number; last[0] >= '0' && last[0] <= '9' {
		t.Errorf("last IRQ %s is numbered; named lines must sort after", last)
	}
	if len(s.Unavailable) != 0 {
		t.Errorf("unavailable = %v", s.Unavailable)
	}
}

func TestIRQKVMRealFile(t *testing.T) {
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectIRQ)
	q := irqNamed(s, "38")
	if q == nil {
		t.Fatal("kvm IRQ 38 (virtio2-input.0) missing")
	}
	wantEq(t, "chip", q.Chip, "PCI-MSIX-0000:00:03.0")
	wantEq(t, "actions", q.Actions, "virtio2-input.0")
	wantEq(t, "affinity", q.Affinity, []int{0, 1})
	wantEq(t, "per-CPU columns", len(q.PerCPU), 2)
}

func TestIRQUnavailable(t *testing.T) {
	s := runAreas(t, tree(t, "metal", map[string]string{"/proc/interrupts": fixture.Delete}), Options{}, collectIRQ)
	wantMissing(t, s, "irqs", "does not exist")
	wantEq(t, "irqs", len(s.IRQs), 0)

	s = runAreas(t, tree(t, "metal", map[string]string{"/proc/irq": fixture.Delete}), Options{}, collectIRQ)
	wantMissing(t, s, "irqs[*].affinity", "/proc/irq")
	if q := irqNamed(s, "101"); q == nil || q.Affinity != nil || q.Total == 0 {
		t.Errorf("without /proc/irq the counts stay and affinity is empty: %+v", q)
	}

	s = runAreas(t, tree(t, "metal", map[string]string{"/proc/irq/104/smp_affinity_list": "0-3,x"}), Options{}, collectIRQ)
	wantMissing(t, s, "irqs[104].affinity", "bad CPU list")
	wantPresent(t, s, "irqs[103].affinity")
}

func TestIRQCorruptFileIsUnavailableNotPanic(t *testing.T) {
	// procfs indexes past the end of a numbered line without a chip column.
	bad := "           CPU0       CPU1\n 24:          1          0\n 25:  1 2\n"
	s := runAreas(t, tree(t, "kvm", map[string]string{"/proc/interrupts": bad}), Options{}, collectIRQ)
	wantMissing(t, s, "irqs", "malformed")
}

func TestIRQActions(t *testing.T) {
	for devices, want := range map[string]string{
		"5-edge ACPI:Ged":                          "ACPI:Ged",
		"1572865-edge mlx5_comp0@pci:0000:03:00.0": "mlx5_comp0@pci:0000:03:00.0",
		"27 Level arch_timer":                      "arch_timer",
		"524288 Edge eth0-TxRx-0":                  "eth0-TxRx-0",
		"9-fasteoi acpi":                           "acpi",
		"timer":                                    "timer",
		"-edge dmar0":                              "dmar0",
		"16-fasteoi ehci_hcd:usb1, uhci_hcd:usb2":  "ehci_hcd:usb1, uhci_hcd:usb2",
		"0-edge":                                   "",
		"":                                         "",
		"91750401-edge i40e-eth0-TxRx-0":           "i40e-eth0-TxRx-0",
		"2-edge timer-name-with-dashes":            "timer-name-with-dashes",
	} {
		if got := irqActions(devices); got != want {
			t.Errorf("irqActions(%q) = %q, want %q", devices, got, want)
		}
	}
}

func FuzzIRQActions(f *testing.F) {
	for _, s := range []string{"5-edge ACPI:Ged", "27 Level arch_timer", "timer", "-edge", "0-", "Edge-edge x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, devices string) {
		got := irqActions(devices)
		// The actions are the tail of the columns: never invented text.
		if got != "" && !strings.HasSuffix(strings.Join(strings.Fields(devices), " "), got) {
			t.Errorf("irqActions(%q) = %q, not a suffix of the input", devices, got)
		}
	})
}

// FuzzInterrupts feeds arbitrary /proc/interrupts text through procfs and
// the guard around it: any input yields IRQs or an error, never a panic.
func FuzzInterrupts(f *testing.F) {
	real, _ := os.ReadFile(filepath.Join(fixture.Dir("metal"), "proc", "interrupts"))
	f.Add(string(real))
	f.Add("           CPU0\n  0:  1  IO-APIC 2-edge timer\nERR: 0\n")
	f.Add("CPU0 CPU1\n 1: 1\n 2: 1 2\n")
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "1"), 0o755); err != nil {
		f.Fatal(err)
	}
	pfs, err := procfs.NewFS(dir)
	if err != nil {
		f.Fatal(err)
	}
	p, err := pfs.Proc(1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if err := os.WriteFile(filepath.Join(dir, "interrupts"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ints, err := readInterrupts(p)
		if err == nil {
			for name, in := range ints {
				irqActions(in.Devices)
				irqCounts(in.Values)
				irqLess(name, "0")
			}
		}
	})
}

// FuzzIRQNumAsAtoi: irqNum, which refuses a name on its first byte so a
// sort does not allocate an error per comparison, agrees with
// strconv.Atoi; isLimitValue's early refusal agrees with ParseUint.
func FuzzIRQNumAsAtoi(f *testing.F) {
	for _, s := range []string{"0", "24", "NMI", "LOC", "-1", "+7", "", "1a", "99999999999999999999", "unlimited", "4096"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := strconv.Atoi(s)
		if got, ok := irqNum(s); ok != (err == nil) || ok && got != n {
			t.Errorf("irqNum(%q) = %d, %v; Atoi: %d, %v", s, got, ok, n, err)
		}
		_, err = strconv.ParseUint(s, 10, 64)
		if want := s == "unlimited" || err == nil; isLimitValue(s) != want {
			t.Errorf("isLimitValue(%q) = %v, want %v", s, !want, want)
		}
	})
}
