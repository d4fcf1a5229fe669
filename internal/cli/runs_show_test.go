package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixrun"
	"github.com/perflab/perflab/internal/run"
)

// Runs stored before the exact PSI share, page cache and vmstat fields
// existed (and the noise readings) are imported from an export that lacks
// those keys; 'runs show' must show what they have — avg10 pressure — and
// leave out what they lack, never as a measured 0. A newer run from a
// kernel without PSI has a placeholder 0 in avg10, which is not shown.
func TestRunsShowOldAndPartialRuns(t *testing.T) {
	old := fixrun.Run("old00001", "cpu")
	noPSI := fixrun.Run("nopsi002", "cpu")
	for i := range 3 {
		old.Monitor = append(old.Monitor, run.MonitorPoint{T: float64(i + 1), UserPct: 50, MemAvailKiB: 1 << 20, PSICPU: 12.5, PSIIO: 0.5})
		cache := int64(2 << 20)
		noPSI.Monitor = append(noPSI.Monitor, run.MonitorPoint{T: float64(i + 1), UserPct: 50, MemAvailKiB: 1 << 20, PageCacheKiB: &cache, DirtyKiB: &cache, WritebackKiB: &cache})
	}
	noPSI.Noise = fixrun.NoisyNoise()
	dir := t.TempDir()
	exp := filepath.Join(dir, "old.json")
	f, err := os.Create(exp)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.WriteExport(f, run.Export{Schema: run.Schema, Runs: []*run.Run{old, noPSI}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Neither run has these keys, as no run before them had.
	b, _ := os.ReadFile(exp)
	for _, key := range []string{`"psi_cpu_pct"`, `"psi_io_pct"`, `"pgpgin_kib_per_s"`, `"allocstall_per_s"`} {
		if strings.Contains(string(b), key) {
			t.Fatalf("the export has %s", key)
		}
	}
	db := filepath.Join(dir, "runs.db")
	if code, _, stderr := runCLI(t, "runs", "import", exp, "--db", db); code != 0 {
		t.Fatalf("import: exit %d %s", code, stderr)
	}

	code, out, stderr := runCLI(t, "runs", "show", "old0", "--db", db)
	if code != 0 {
		t.Fatalf("runs show old: exit %d %s", code, stderr)
	}
	for _, want := range []string{"  host noise: not recorded\n", "PSI cpu some           12.5 / 12.5       % (avg10)", "PSI memory some         0.0 / 0.0        % (avg10)"} {
		if !strings.Contains(out, want) {
			t.Errorf("old run lacks %q:\n%s", want, out)
		}
	}
	for _, absent := range []string{"page cache", "dirty", "writeback", "read from disk", "reclaim", "% of time"} {
		if strings.Contains(out, absent) {
			t.Errorf("old run shows %q, which it never recorded:\n%s", absent, out)
		}
	}

	code, out, stderr = runCLI(t, "runs", "show", "nopsi", "--db", db, "--monitor")
	if code != 0 {
		t.Fatalf("runs show nopsi: exit %d %s", code, stderr)
	}
	if !strings.Contains(out, "page cache           2048.0 / 2048.0     MiB") || !strings.Contains(out, "host noise: before 1.1%") {
		t.Errorf("newer run lacks its page cache or noise:\n%s", out)
	}
	if strings.Contains(out, "PSI") || strings.Contains(out, "psi.") {
		t.Errorf("a run without PSI shows PSI values (placeholder zeros):\n%s", out)
	}
}
