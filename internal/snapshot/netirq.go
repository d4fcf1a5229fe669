package snapshot

import (
	"path"
	"sort"
	"strconv"
	"strings"
)

// nicIRQs returns the IRQs serving a NIC, found two ways because neither is
// complete: the PCI function's msi_irqs directory (every MSI/MSI-X vector the
// device allocated, but nothing for legacy INTx or when sysfs hides it) and
// handler names in /proc/interrupts, which drivers derive from the interface
// name ("eth0-TxRx-3", "i40e-eth0-TxRx-0"), the PCI address
// ("mlx5_comp3@pci:0000:03:00.0") or the virtio device ("virtio2-input.0").
func nicIRQs(c *collector, nic NIC) []int {
	if nic.Virtual {
		return nil
	}
	set := map[int]bool{}
	if d := pciDir(c, &nic); d != "" {
		if ents, err := c.fs.ReadDir(d + "/msi_irqs"); err == nil {
			for _, e := range ents {
				if n, err := strconv.Atoi(e.Name()); err == nil {
					set[n] = true
				}
			}
		}
	}
	virtio := ""
	if dev, err := c.nicDevice(nic.Name); err == nil {
		if b := path.Base(dev); strings.HasPrefix(b, "virtio") {
			virtio = b
		}
	}
	for _, irq := range c.s.IRQs {
		n, err := strconv.Atoi(irq.Number)
		if err != nil {
			continue
		}
		if irqServesNIC(irq.Actions, nic.Name, nic.PCI, virtio) {
			set[n] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]int, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// irqServesNIC reports whether any handler on an IRQ line belongs to the NIC.
// A name must be followed by "-" or end the handler so that eth1 does not
// claim eth10's queues.
func irqServesNIC(actions, name, pci, virtio string) bool {
	for _, a := range strings.Split(actions, ", ") {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
		case name != "" && (a == name || strings.HasPrefix(a, name+"-") || strings.Contains(a, "-"+name+"-") || strings.HasSuffix(a, "-"+name)):
			return true
		case pci != "" && strings.HasSuffix(a, "@pci:"+pci):
			return true
		case virtio != "" && strings.HasPrefix(a, virtio+"-"):
			return true
		}
	}
	return false
}
