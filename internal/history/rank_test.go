package history

import (
	"testing"

	"github.com/perflab/perflab/internal/compare"
	"github.com/perflab/perflab/internal/effect"
	"github.com/perflab/perflab/internal/run"
)

// A change point's settings are named in compare's order: for a CPU
// metric that got worse, the governor (a known knob that slows it) before
// a sysctl that cannot move it and a driver that is no setting.
func TestChangeSettingsRankedByExplain(t *testing.T) {
	s := &Series{Probe: "cpu", Metric: "events_per_sec.t1", Unit: "events/s", Better: run.Higher}
	c := &Change{Verdict: effect.Worse, Settings: []compare.Diff{
		{Path: "net.interfaces[eth0].driver", Before: "virtio_net", After: ""},
		{Path: "sysctl.net.core.somaxconn", Before: "4096", After: "128"},
		{Path: "cpu.governors.powersave", Before: "(absent)", After: "0-1"},
	}}
	s.rankSettings(c)
	if c.Settings[0].Path != "cpu.governors.powersave" {
		t.Errorf("settings in order %v, want the governor first", c.Settings)
	}
}
