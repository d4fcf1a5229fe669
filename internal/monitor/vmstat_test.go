package monitor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkVM(t *testing.T, got VMStat, want map[string]uint64) {
	t.Helper()
	for name, c := range map[string]Counter{
		"pgpgin": got.PgpgIn, "pgpgout": got.PgpgOut, "pgmajfault": got.MajFault,
		"scan": got.Scan, "scan_direct": got.ScanDirect, "steal": got.Steal, "allocstall": got.AllocStall,
	} {
		if !c.OK || c.N != want[name] {
			t.Errorf("%s = %+v, want %d", name, c, want[name])
		}
	}
}

// The current format (Linux 6.18, the kvm fixture): one counter per name,
// with pgscan_direct_throttle, pgscan_khugepaged, pgsteal_anon … next to the
// names that count.
func TestParseVMStatCurrentKernel(t *testing.T) {
	text := readFile(t, filepath.Join(fixture.Dir("kvm"), "proc", "vmstat"))
	// Make each counter distinct so that a line summed into the wrong
	// field shows; the edits keep the file's names and layout.
	text = setVM(t, text, map[string]uint64{
		"pgscan_kswapd": 1000, "pgscan_direct": 200, "pgscan_khugepaged": 7, "pgscan_proactive": 9,
		"pgscan_direct_throttle": 11, "pgscan_anon": 13, "pgscan_file": 1187,
		"pgsteal_kswapd": 900, "pgsteal_direct": 150, "pgsteal_khugepaged": 3, "pgsteal_anon": 5, "pgsteal_file": 1045,
		"allocstall_dma32": 1, "allocstall_normal": 20, "allocstall_movable": 300,
	})
	v, err := parseVMStat(text)
	if err != nil {
		t.Fatal(err)
	}
	checkVM(t, v, map[string]uint64{
		"pgpgin": 407915045, "pgpgout": 616563052, "pgmajfault": 90335,
		"scan": 1200, "scan_direct": 200, "steal": 1050, "allocstall": 321,
	})
}

// Linux 3.8: per-zone reclaim counters and a single allocstall.
func TestParseVMStatLinux38(t *testing.T) {
	v, err := parseVMStat(readFile(t, "testdata/vmstat-linux-3.8"))
	if err != nil {
		t.Fatal(err)
	}
	checkVM(t, v, map[string]uint64{
		"pgpgin": 4398164, "pgpgout": 188556, "pgmajfault": 358,
		"scan":        12708 + 918789 + 73 + 4115, // kswapd and direct, every zone; not pgscan_direct_throttle
		"scan_direct": 73 + 4115,
		"steal":       12708 + 917837 + 73 + 4085,
		"allocstall":  73,
	})
}

func TestParseVMStatRejectsABadCount(t *testing.T) {
	if _, err := parseVMStat("pgpgin 12\npgmajfault twelve\n"); err == nil || !strings.Contains(err.Error(), "pgmajfault") {
		t.Errorf("bad count of a needed counter: err = %v", err)
	}
	// Lines the monitor does not use are not its business.
	v, err := parseVMStat("nr_free_pages x\nweird\n\npgpgin 12\n")
	if err != nil || !v.PgpgIn.OK || v.PgpgIn.N != 12 || v.PgpgOut.OK {
		t.Errorf("unused bad lines: %+v %v", v, err)
	}
	if m := v.missing(); len(m) != 6 || m[0] != "pgpgout_kib_per_s" {
		t.Errorf("missing = %v", m)
	}
}

// setVM replaces the values of existing vmstat lines.
func setVM(t testing.TB, text string, set map[string]uint64) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	found := 0
	for i, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		if v, ok := set[name]; ok {
			lines[i] = name + " " + strconv.FormatUint(v, 10)
			found++
		}
	}
	if found != len(set) {
		t.Fatalf("setVM: %d of the %d names are not lines of the file", len(set)-found, len(set))
	}
	return strings.Join(lines, "\n")
}

// vmNames spells out, independently of is(), every name each counter sums.
func vmNames() map[string][]string {
	out := map[string][]string{
		"pgpgin": {"pgpgin"}, "pgpgout": {"pgpgout"}, "pgmajfault": {"pgmajfault"},
		"pgscan_kswapd": {"scan"}, "pgscan_direct": {"scan", "scan_direct"},
		"pgsteal_kswapd": {"steal"}, "pgsteal_direct": {"steal"}, "allocstall": {"allocstall"},
	}
	for _, z := range []string{"dma", "dma32", "normal", "high", "movable", "device"} {
		for _, base := range []string{"pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "allocstall"} {
			out[base+"_"+z] = out[base]
		}
		out["pgsteal_"+z] = []string{"steal"}
	}
	return out
}

// FuzzParseVMStat: the parser never panics, fails exactly when a counted
// name has a value that is not an unsigned integer, and otherwise sums
// exactly the lines whose names are listed in vmNames.
func FuzzParseVMStat(f *testing.F) {
	f.Add(readFile(f, filepath.Join(fixture.Dir("kvm"), "proc", "vmstat")))
	f.Add(readFile(f, "testdata/vmstat-linux-3.8"))
	f.Add("pgscan_direct_throttle 5\npgscan_direct 7\npgsteal_anon 1\nallocstall_normal  3 \n")
	f.Add("pgpgin -1\n")
	f.Add("pgpgin 18446744073709551615\npgpgin 2\n")
	names := vmNames()
	f.Fuzz(func(t *testing.T, text string) {
		v, err := parseVMStat(text)
		want := map[string]uint64{}
		seen := map[string]bool{}
		bad := false
		for _, line := range strings.Split(text, "\n") {
			name, value, _ := strings.Cut(line, " ")
			to, ok := names[name]
			if !ok {
				continue
			}
			n, perr := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
			if perr != nil {
				bad = true
				break
			}
			for _, c := range to {
				want[c] += n
				seen[c] = true
			}
		}
		if bad != (err != nil) {
			t.Fatalf("error %v, want error %v", err, bad)
		}
		if bad {
			return
		}
		for name, c := range map[string]Counter{
			"pgpgin": v.PgpgIn, "pgpgout": v.PgpgOut, "pgmajfault": v.MajFault,
			"scan": v.Scan, "scan_direct": v.ScanDirect, "steal": v.Steal, "allocstall": v.AllocStall,
		} {
			if c.OK != seen[name] || c.N != want[name] {
				t.Fatalf("%s = %+v, want %d (seen %v)", name, c, want[name], seen[name])
			}
		}
	})
}
