package knob_test

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/snapshot/factpath"
)

// Every knob names a fact the snapshot has: its path passes factpath.
func TestPathsAreFacts(t *testing.T) {
	for _, k := range knob.All() {
		if err := factpath.Check(k.Path); err != nil {
			t.Errorf("knob %s: %v", k.Path, err)
		}
		if kind, ok := factpath.KindOf(k.Path); !ok || kind != factpath.Setting {
			t.Errorf("knob %s: fact kind %q, want setting", k.Path, kind)
		}
		if k.Settable() && len(k.Sources) == 0 {
			t.Errorf("knob %s is settable but has no file", k.Path)
		}
		for _, v := range k.Ladder {
			if _, err := k.FileValue(v); err != nil {
				t.Errorf("knob %s: ladder value %q: %v", k.Path, v, err)
			}
		}
	}
}

// The walk the issue asks for: every knob, on every fixture tree, reads
// through hostfs and parses, and a settable one writes (into a private
// copy) exactly what its format says and reads back what was written.
func TestReadWriteOnEveryFixtureTree(t *testing.T) {
	for _, tree := range fixture.Names() {
		t.Run(tree, func(t *testing.T) {
			fsys := fixture.Tree(t, tree, nil)
			read := 0
			for _, k := range knob.All() {
				for _, in := range k.Instances(fsys) {
					v, err := in.Read(fsys)
					if err != nil {
						var perr *fs.PathError
						if errors.As(err, &perr) {
							t.Errorf("%s %s: %v", tree, in.Name(), err)
						}
						// A file the copy holds in a form the kernel would not
						// print is reported, not hidden.
						t.Logf("%s %s: %v", tree, in.Name(), err)
						continue
					}
					read++
					if !in.Settable() {
						continue
					}
					// Write the value read, then each ladder value: the file
					// holds exactly what Content says, and reads back as the
					// normalised value.
					values := []string{v}
					for _, f := range in.Ladder {
						fv, err := in.FromFact(fsys, f)
						if err != nil {
							t.Errorf("%s %s: ladder value %q: %v", tree, in.Name(), f, err)
							continue
						}
						values = append(values, fv)
					}
					for _, want := range values {
						p, data, err := in.Content(fsys, want)
						if err != nil {
							t.Errorf("%s %s: content %q: %v", tree, in.Name(), want, err)
							continue
						}
						if err := in.Write(fsys, want); err != nil {
							t.Errorf("%s %s: write %q: %v", tree, in.Name(), want, err)
							continue
						}
						got, err := os.ReadFile(fsys.Path(p))
						if err != nil || string(got) != string(data) {
							t.Errorf("%s %s: file holds %q after writing %q, want %q (%v)", tree, in.Name(), got, want, data, err)
						}
						if back, err := in.Read(fsys); err != nil || back != in.Normalize(want) {
							t.Errorf("%s %s: wrote %q, reads back %q (%v), want %q", tree, in.Name(), want, back, err, in.Normalize(want))
						}
					}
				}
			}
			if read < 10 {
				t.Errorf("%s: only %d knob instances read: the walk found nothing to check", tree, read)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	k, ok := knob.Lookup("block[sda].read_ahead_kib")
	if !ok || !k.Bound() || k.Name() != "/sys/block/sda/queue/read_ahead_kb" || k.Fact() != "block[sda].read_ahead_kib" {
		t.Fatalf("block[sda].read_ahead_kib: %+v %v", k, ok)
	}
	k, ok = knob.Lookup("net.interfaces[eth0].rx_queues[rx-1].rps_cpus")
	if !ok || k.Name() != "/sys/class/net/eth0/queues/rx-1/rps_cpus" || k.Scope != knob.NetNS {
		t.Fatalf("rps: %+v %v", k, ok)
	}
	if k, ok := knob.Lookup("cpu.governors.performance"); !ok || k.Path != "cpu.governors" || k.Bound() {
		t.Fatalf("cpu.governors.performance: %+v %v", k, ok)
	}
	if k, ok := knob.Lookup("kernel.params.intel_idle.max_cstate"); !ok || k.Scope != knob.Reboot || k.Settable() {
		t.Fatalf("kernel.params: %+v %v", k, ok)
	}
	if _, ok := knob.Lookup("cpu.model"); ok {
		t.Fatal("cpu.model is not a knob")
	}
	for name, want := range map[string]knob.Scope{
		"net.core.somaxconn":          knob.NetNS,
		"net.core.netdev_max_backlog": knob.Host,
		"net.ipv4.tcp_mem":            knob.Host,
		"net.ipv4.tcp_rmem":           knob.NetNS,
		"vm.swappiness":               knob.Host,
		"net.ipv4.conf.all.rp_filter": knob.NetNS,
	} {
		k, ok := knob.Lookup("sysctl." + name)
		if !ok || k.Scope != want || k.Method != knob.Sysctl || k.Name() != name {
			t.Errorf("sysctl.%s: %+v %v, want scope %s", name, k, ok, want)
		}
	}
	if k := knob.MustLookup("sysctl.net.core.rmem_max"); !k.NetNSReadOnly {
		t.Error("net.core.rmem_max is read-only outside the initial netns")
	}
}

func TestForFile(t *testing.T) {
	for p, want := range map[string]string{
		"/sys/kernel/mm/transparent_hugepage/enabled":           "memory.thp.enabled",
		"/sys/block/nvme0n1/queue/read_ahead_kb":                "block[*].read_ahead_kib",
		"/sys/class/net/eth0/queues/tx-0/xps_cpus":              "net.interfaces[*].tx_queues[*].xps_cpus",
		"/proc/irq/24/smp_affinity_list":                        "irqs[*].affinity",
		"/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor": "cpu.governors",
		"/sys/devices/system/cpu/intel_pstate/no_turbo":         "cpu.boost",
		"/sys/fs/cgroup/system.slice/nginx.service/cpu.max":     "cgroup.cpu_quota_us",
		"/sys/fs/cgroup/cpu/system.slice/cpu.cfs_quota_us":      "cgroup.cpu_quota_us",
		"/proc/sys/net/ipv4/tcp_rmem":                           "sysctl.net.ipv4.tcp_rmem",
	} {
		k, ok := knob.ForFile(p)
		if !ok || k.Path != want || !k.Bound() {
			t.Errorf("ForFile(%s) = %s bound=%v %v, want %s", p, k.Path, k.Bound(), ok, want)
			continue
		}
		if k.Method == knob.File && k.Files()[0] != p {
			t.Errorf("ForFile(%s) resolves to %s", p, k.Files()[0])
		}
	}
	if _, ok := knob.ForFile("/etc/passwd"); ok {
		t.Error("/etc/passwd is not a knob")
	}
	// no_turbo is the inverse of cpu.boost.
	intel := fixture.Tree(t, "kvm", map[string]string{
		"/sys/devices/system/cpu/cpufreq/boost":         fixture.Delete,
		"/sys/devices/system/cpu/intel_pstate/no_turbo": "1\n",
	})
	boost := knob.MustLookup("cpu.boost")
	if s, err := boost.FromFact(intel, "true"); err != nil || s != "0" {
		t.Errorf("boost true → no_turbo %q %v, want 0", s, err)
	}
	if p, _, _ := boost.Resolve(intel); p != "/sys/devices/system/cpu/intel_pstate/no_turbo" {
		t.Errorf("cpu.boost resolves to %s on an intel_pstate host", p)
	}
	cg := knob.MustLookup("cgroup.cpu_quota_us").With("/a")
	v2 := fixture.Tree(t, "kvm", map[string]string{"/sys/fs/cgroup/a/cpu.max": "max 100000\n"})
	if s, err := cg.FromFact(v2, "-1"); err != nil || s != "max" {
		t.Errorf("quota -1 on v2 → %q %v, want max", s, err)
	}
	if v, err := cg.Read(v2); err != nil || v != "max" {
		t.Errorf("cpu.max reads %q %v, want max", v, err)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		f        knob.Format
		raw, out string
		bad      bool
	}{
		{knob.Choice, "always [madvise] never\n", "madvise", false},
		{knob.Choice, "always madvise never", "", true},
		{knob.Ints, "4096\t131072\t6291456\n", "4096 131072 6291456", false},
		{knob.Ints, "4096 x", "", true},
		{knob.CPUMask, "00000000,00000003\n", "3", false},
		{knob.CPUMask, "0\n", "0", false},
		{knob.CPUList, "0-1,3\n", "0-1,3", false},
		{knob.Max, "max 100000\n", "max", false},
		{knob.Max, "50000 100000\n", "50000", false},
		{knob.Limit, "9223372036854771712\n", "-1", false},
		{knob.Limit, "1073741824\n", "1073741824", false},
		{knob.Int, "12x", "", true},
	} {
		got, err := knob.Parse(c.f, c.raw)
		if (err != nil) != c.bad || got != c.out {
			t.Errorf("Parse(%s, %q) = %q, %v; want %q bad=%v", c.f, c.raw, got, err, c.out, c.bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"always [madvise] never", "4096 87380 6291456", "ff,00000001", "0-3,7", "max 100000", "-1", "", "[", "[]", "[[x]]", "a [b]] c"} {
		f.Add(s)
	}
	formats := []knob.Format{knob.Int, knob.Ints, knob.Text, knob.Choice, knob.CPUMask, knob.CPUList, knob.Bool, knob.NotBool, knob.Max, knob.Limit}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, fm := range formats {
			v, err := knob.Parse(fm, raw)
			if err != nil {
				continue
			}
			// What parses encodes, and encoding then parsing is stable
			// (a choice list is encoded as its selected word).
			e, err := knob.Encode(fm, v)
			if err != nil {
				if v == "" {
					continue
				}
				t.Fatalf("%s: %q parses to %q, which does not encode: %v", fm, raw, v, err)
			}
			if back, err := knob.Parse(fm, e); err != nil || back != v {
				t.Fatalf("%s: %q → %q → %q → %q (%v)", fm, raw, v, e, back, err)
			}
			if strings.ContainsAny(e, "\n") {
				t.Fatalf("%s: encoded value %q has a newline", fm, e)
			}
		}
	})
}
