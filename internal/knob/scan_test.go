package knob

import (
	"regexp"
	"slices"
	"testing"
)

// The scanners replace these patterns on the collectors' hot path; they
// must find exactly what the patterns find.
var (
	refKeyRE     = regexp.MustCompile(`\{([a-z]+)\}`)
	refBracketRE = regexp.MustCompile(`\[[^\]]*\]`)
)

func refTemplateKeys(tmpl string) []string {
	var out []string
	for _, m := range refKeyRE.FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}

func refBracketKeys(path string) (string, []string) {
	var keys []string
	for _, m := range refBracketRE.FindAllString(path, -1) {
		if k := m[1 : len(m)-1]; k != "*" {
			keys = append(keys, k)
		}
	}
	return refBracketRE.ReplaceAllString(path, "[*]"), keys
}

var scanSeeds = []string{
	"", "cpu.governor", "block[sda].queue.scheduler", "net.interfaces[eth0].rx_queues[rx-0].rps_cpus",
	"irqs[*].affinity", "a[b[c]d", "a]b[", "[]", "[*][x]", "x[", "x[]y[z", "/sys/block/{dev}/queue/{x}",
	"/sys/fs/cgroup{cgroup}/memory.max", "{", "{}", "{A}", "{a", "{a}{b}", "{{a}}", "/x/{dev}}", "{ab1}",
}

func checkScan(t *testing.T, s string) {
	t.Helper()
	if got, want := templateKeys(s), refTemplateKeys(s); !slices.Equal(got, want) {
		t.Errorf("templateKeys(%q) = %q, pattern finds %q", s, got, want)
	}
	gotPat, gotKeys := bracketKeys(s)
	wantPat, wantKeys := refBracketKeys(s)
	if gotPat != wantPat || !slices.Equal(gotKeys, wantKeys) {
		t.Errorf("bracketKeys(%q) = %q %q, pattern gives %q %q", s, gotPat, gotKeys, wantPat, wantKeys)
	}
}

func TestScannersMatchPatterns(t *testing.T) {
	for _, s := range scanSeeds {
		checkScan(t, s)
	}
	for _, k := range All() {
		checkScan(t, k.Path)
		for _, src := range k.Sources {
			checkScan(t, src.File)
		}
	}
}

func FuzzScannersMatchPatterns(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkScan(t, s) })
}
