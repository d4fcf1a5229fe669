package knowledge

import "testing"

func TestFaster(t *testing.T) {
	e := func(id string) *Entry {
		for i := range Base {
			if Base[i].ID == id {
				return &Base[i]
			}
		}
		t.Fatalf("no entry %s", id)
		return nil
	}
	for _, c := range []struct {
		id, path, before, after string
		want                    int // sign
	}{
		{"thp", "memory.thp.enabled", "always", "never", -1},
		{"thp", "memory.thp.enabled", "never", "madvise", 1},
		{"thp", "memory.thp.defrag", "always", "never", 0},
		{"cpu-governor", "cpu.governors.powersave", absent, "0-1", -1},
		{"cpu-governor", "cpu.governors.performance", "0-1", absent, -1},
		{"cpu-governor", "cpu.governors.performance", absent, "0-1", 1},
		{"cpu-boost", "cpu.boost", "true", "false", -1},
		{"mitigations", "kernel.vulnerabilities.meltdown", "Not affected", "Mitigation: PTI", -1},
		{"mitigations", "kernel.vulnerabilities.meltdown", "Mitigation: PTI", "Vulnerable", 1},
		{"numa", "cpu.numa[0].mem_total_kib", "5", "7", 0},
	} {
		got := e(c.id).Faster(c.path, c.before, c.after)
		if sign(got) != c.want {
			t.Errorf("%s %s %s → %s: %d, want sign %d", c.id, c.path, c.before, c.after, got, c.want)
		}
	}
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
