package snapshot

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/cpuset"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/testenv"
)

// TestLscpuReference runs snapshot over the real /proc and /sys trees that
// util-linux keeps for its lscpu tests (22 machines: arm64 big.LITTLE,
// armv7, LoongArch, POWER7, ppc, three RISC-V boards, five s390 systems
// under LPAR, z/VM and KVM, sparc64, VirtualBox, VMware and x86) and
// compares every CPU fact both tools report with lscpu's own expected
// output for that tree (tests/expected/lscpu/lscpu-NAME, the first,
// human-readable section). scripts/refdata fetches them from Debian's
// util-linux source package; nothing of util-linux is committed here.
//
// A fact lscpu prints as "-" (it could not tell) must be Unavailable in
// the snapshot, with a reason.
func TestLscpuReference(t *testing.T) {
	dir := refdataDir(t, "util-linux")
	trees, _ := filepath.Glob(filepath.Join(dir, "trees", "*"))
	if len(trees) == 0 {
		testenv.Unavailable(t, "no lscpu dumps in %s (run scripts/refdata)", dir)
	}
	agree, total := 0, 0
	for _, tree := range trees {
		name := filepath.Base(tree)
		want, err := readLscpuExpected(filepath.Join(dir, "tests", "expected", "lscpu", "lscpu-"+name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		t.Run(name, func(t *testing.T) {
			fs, err := hostfs.New(tree)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Collect(fs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range lscpuChecks(s, want) {
				total++
				if c.got == c.want {
					agree++
					continue
				}
				t.Errorf("%s: perflab %q, lscpu %q", c.fact, c.got, c.want)
			}
		})
	}
	t.Logf("perflab agrees with lscpu on %d of %d CPU facts over %d trees", agree, total, len(trees))
}

// refdataDir is where scripts/refdata put the reference data of project.
func refdataDir(t *testing.T, project string) string {
	t.Helper()
	base := os.Getenv("PERFLAB_REFDATA")
	if base == "" {
		base = "/var/cache/perflab/refdata"
	}
	dir := filepath.Join(base, project)
	if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
		testenv.Unavailable(t, "reference data %s missing (scripts/refdata fetches it; scripts/test runs it)", dir)
	}
	return dir
}

// lscpuOut is lscpu's summary: each key's values in order (a key repeats
// once per CPU type on heterogeneous systems).
type lscpuOut map[string][]string

func (o lscpuOut) first(k string) (string, bool) {
	if v := o[k]; len(v) > 0 {
		return v[0], true
	}
	return "", false
}

func readLscpuExpected(path string) (lscpuOut, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := lscpuOut{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			break // the parsable sections follow
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		out[k] = append(out[k], strings.TrimSpace(v))
	}
	return out, sc.Err()
}

type factCheck struct{ fact, got, want string }

var cacheLine = regexp.MustCompile(`^([0-9.]+) ([KMG]i)B(?: \((\d+) instances?\))?$`)

// lscpuChecks lists the facts both tools state for the tree.
func lscpuChecks(s *Snapshot, want lscpuOut) []factCheck {
	var cs []factCheck
	add := func(fact, got, want string) { cs = append(cs, factCheck{fact, got, want}) }
	unavail := func(path string) string {
		if r, ok := s.Unavailable[path]; ok && r != "" {
			return "-"
		}
		return "(empty, no reason)"
	}
	cpu := s.CPU
	if v, ok := want.first("CPU(s)"); ok {
		add("cpu.present", strconv.Itoa(cpu.Present), v)
	}
	if v, ok := want.first("On-line CPU(s) list"); ok {
		add("cpu.online", cpuset.FormatList(cpu.Online), normList(v))
	}
	if v, ok := want.first("Vendor ID"); ok {
		add("cpu.vendor", cpu.Vendor, v)
	}
	if v, ok := want.first("Model name"); ok {
		got := cpu.Model
		if got == "" {
			got = unavail("cpu.model")
		}
		add("cpu.model", got, v)
	}
	homogeneous := len(want["Model name"]) <= 1
	if v, ok := want.first("Stepping"); ok {
		add("cpu.stepping", cpu.Stepping, v)
	}
	if v, ok := want.first("Socket(s)"); ok && homogeneous {
		add("cpu.sockets", strconv.Itoa(cpu.Sockets), v)
		if cps, ok := want.first("Core(s) per socket"); ok {
			n, _ := strconv.Atoi(v)
			c, _ := strconv.Atoi(cps)
			add("cpu.cores", strconv.Itoa(cpu.Cores), strconv.Itoa(n*c))
		}
	}
	if v, ok := want.first("Thread(s) per core"); ok && homogeneous {
		add("cpu.smt.threads_per_core", strconv.Itoa(cpu.SMT.ThreadsPerCore), v)
	}
	if v, ok := want.first("NUMA node(s)"); ok {
		add("cpu.numa (nodes)", strconv.Itoa(len(cpu.NUMA)), v)
		for _, n := range cpu.NUMA {
			w, _ := want.first(fmt.Sprintf("NUMA node%d CPU(s)", n.ID))
			got := cpuset.FormatList(n.CPUs)
			if n.CPUs == nil {
				got = unavail(ElemPath("cpu.numa", strconv.Itoa(n.ID), "cpus"))
			}
			add(fmt.Sprintf("cpu.numa[%d].cpus", n.ID), got, normList(w))
		}
	}
	if v, ok := want.first("Hypervisor vendor"); ok {
		add("host.hypervisor_vendor", s.Host.HypervisorVendor, v)
	}
	if v, ok := want.first("Hypervisor"); ok {
		add("host.hypervisor", s.Host.Hypervisor, v)
	}
	if v, ok := want.first("Virtualization type"); ok {
		add("host.virtualization_type", s.Host.VirtualizationType, v)
	}
	for _, k := range []string{"L1d", "L1i", "L2", "L2d", "L2i", "L3", "L4"} {
		v, ok := want.first(k + " cache")
		if !ok {
			continue
		}
		m := cacheLine.FindStringSubmatch(v)
		if m == nil {
			continue
		}
		size, _ := strconv.ParseFloat(m[1], 64)
		size *= map[string]float64{"Ki": 1, "Mi": 1024, "Gi": 1024 * 1024}[m[2]]
		inst := 1
		if m[3] != "" {
			inst, _ = strconv.Atoi(m[3])
		}
		want := strconv.FormatInt(int64(size)/int64(inst), 10)
		add("cpu.caches["+k+"].size_kib", cacheSize(cpu.Caches, k), want)
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].fact < cs[j].fact })
	return cs
}

// cacheSize finds lscpu's cache name (L1d, L2, L2i …) among the caches.
func cacheSize(cs []Cache, name string) string {
	lvl, _ := strconv.Atoi(name[1:2])
	typ := map[string]string{"d": "Data", "i": "Instruction", "": "Unified"}[name[2:]]
	for _, c := range cs {
		if c.Level == lvl && (c.Type == typ || typ == "Unified" && c.Type == "Data" && len(name) == 2) {
			return strconv.FormatInt(c.SizeKiB, 10)
		}
	}
	return "(none)"
}

// normList rewrites lscpu's lists ("0,1", "1-5,8-19") in cpuset's form.
func normList(v string) string {
	ids, err := cpuset.ParseList(v)
	if err != nil {
		return v
	}
	return cpuset.FormatList(ids)
}
