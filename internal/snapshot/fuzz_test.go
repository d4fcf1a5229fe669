package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

var kbValue = regexp.MustCompile(`^[0-9]{1,18} kB$`)

// seedFile adds a fixture file as a fuzz seed when the tree has it.
func seedFile(f *testing.F, tree, p string) {
	if data, err := os.ReadFile(fixture.Dir(tree) + p); err == nil {
		f.Add(string(data))
	}
}

func FuzzCmdline(f *testing.F) {
	for _, tree := range []string{"kvm", "metal", "kunpeng"} {
		seedFile(f, tree, "/proc/cmdline")
	}
	f.Add(`a="b c" "d=e f" -- g=h`)
	f.Add(`"`)
	f.Add(`x-y-z=1 x_y_z=2`)
	f.Fuzz(func(t *testing.T, s string) {
		params := parseCmdline(s)
		words := cmdlineWords(s)
		for k := range params {
			if k == "" || strings.Contains(k, "-") {
				t.Fatalf("%q: bad key %q", s, k)
			}
		}
		// Nothing after a bare "--" is a kernel parameter.
		for i, w := range words {
			if w == "--" {
				rest := parseCmdline(strings.Join(quoteAll(words[:i]), " "))
				if len(rest) != len(params) {
					t.Fatalf("%q: %d params, %d before --", s, len(params), len(rest))
				}
				break
			}
		}
		// Words re-joined with quotes parse to the same parameters.
		again := parseCmdline(strings.Join(quoteAll(words), " "))
		if fmt.Sprint(again) != fmt.Sprint(params) {
			t.Fatalf("%q: %v, re-quoted %v", s, params, again)
		}
	})
}

// quoteAll quotes each word so white space inside survives a re-parse
// (cmdlineWords has consumed every quote, so none is inside a word).
func quoteAll(words []string) []string {
	out := make([]string, 0, len(words))
	for _, w := range words {
		if w == "--" {
			out = append(out, w)
			continue
		}
		out = append(out, `"`+w+`"`)
	}
	return out
}

func FuzzCPUInfo(f *testing.F) {
	for _, tree := range []string{"kvm", "metal", "kunpeng"} {
		seedFile(f, tree, "/proc/cpuinfo")
	}
	f.Add("processor : 0\nprocessor : 1\n")
	f.Add("CPU implementer\t: 0xZZ\nCPU part : \n")
	if m, _ := filepath.Glob("testdata/cpuinfo/*.txt"); len(m) > 0 {
		for _, p := range m {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		ci := parseCPUInfo([]byte(s))
		if n := strings.Count(s, "processor"); ci.count > n {
			t.Fatalf("%d processors from %d mentions", ci.count, n)
		}
		if len(ci.cores) < len(ci.packages) && len(ci.cores) > 0 {
			t.Fatalf("%d cores in %d packages", len(ci.cores), len(ci.packages))
		}
		var c CPU
		ci.fill(&c)
		if a, why := ci.arch(); (a == "") == (why == "") {
			t.Fatalf("arch %q with reason %q: want exactly one", a, why)
		}
		if ci.isARM() && c.Vendor == "" {
			t.Fatal("ARM cpuinfo without a vendor name")
		}
	})
}

func FuzzSmapsRollup(f *testing.F) {
	seedFile(f, "kvm", "/proc/4243/smaps_rollup")
	seedFile(f, "kvm", "/proc/4243/status")
	f.Add("AnonHugePages: 2048 kB\nAnonHugePages: 1 kB\n")
	f.Fuzz(func(t *testing.T, s string) {
		m := colonFields([]byte(s))
		for k, v := range m {
			if k != strings.TrimSpace(k) || v != strings.TrimSpace(v) {
				t.Fatalf("untrimmed %q: %q", k, v)
			}
		}
		if v, ok := m["AnonHugePages"]; ok && kbValue.MatchString(v) {
			n, err := kib(v)
			if err != nil || fmt.Sprint(n)+" kB" != strings.TrimLeft(v, "0") && n != 0 {
				t.Fatalf("kib(%q) = %d, %v", v, n, err)
			}
		}
		_ = nodeMeminfo([]byte(s))
	})
}

func FuzzLimits(f *testing.F) {
	seedFile(f, "kvm", "/proc/4242/limits")
	f.Add(limitsHeader + "Max open files 1 2 files\n")
	f.Add("Max 18446744073709551615 unlimited\n")
	f.Fuzz(func(t *testing.T, s string) {
		lim, err := parseLimits([]byte(s))
		if err != nil {
			return
		}
		for name, r := range lim {
			if !strings.HasPrefix(name, "Max") || r.soft < -1 || r.hard < -1 {
				t.Fatalf("%q: row %q = %+v", s, name, r)
			}
		}
	})
}

func FuzzLoadavg(f *testing.F) {
	seedFile(f, "kvm", "/proc/loadavg")
	f.Add("0.00 0.01 0.05 1/1 1")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLoadavg(s)
		if err != nil {
			return
		}
		back, err := parseLoadavg(fmt.Sprintf("%v %v %v %d/%d 1", l.load1, l.load5, l.load15, l.running, l.tasks))
		if err != nil || back != l {
			t.Fatalf("%q: %+v does not survive formatting: %+v, %v", s, l, back, err)
		}
	})
}

func FuzzParsers(f *testing.F) {
	f.Add("none voluntary (full) lazy")
	f.Add("32K")
	f.Add("()")
	f.Fuzz(func(t *testing.T, s string) {
		if m, ok := parensChoice(s); ok && !strings.Contains(s, "("+m+")") {
			t.Fatalf("%q: %q", s, m)
		}
		_, _ = parseSizeKiB(s)
		_ = unquoteShell(s)
	})
}

func FuzzProcCgroup(f *testing.F) {
	for _, tree := range []string{"kvm", "metal"} {
		seedFile(f, tree, "/proc/4242/cgroup")
	}
	f.Add("12:cpu,cpuacct:/a:b\n0::/\n")
	f.Fuzz(func(t *testing.T, s string) {
		lines, err := parseProcCgroup([]byte(s))
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.HierarchyID < 0 {
				t.Fatalf("negative hierarchy ID in %+v", l)
			}
		}
	})
}
