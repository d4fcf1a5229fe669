package tools

import (
	"errors"
	"strings"
	"testing"
)

func parseSysbenchFixture(t *testing.T, name string) *SysbenchResult {
	t.Helper()
	r, err := ParseSysbench(string(fixture(t, "sysbench", name)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestParseSysbench10(t *testing.T) {
	r := parseSysbenchFixture(t, "1.0.20-cpu.txt")
	if r.Version != "1.0.20" {
		t.Errorf("version %q", r.Version)
	}
	wantNear(t, "cpu events/s", r.EventsPerSec, 3812.00)
	wantNear(t, "cpu total time", r.TotalTime, 1.0023)
	wantNear(t, "cpu p95", r.LatP95Ms, 1.47)

	r = parseSysbenchFixture(t, "1.0.20-memory.txt")
	wantNear(t, "memory MiB/s", r.MiBPerSec, 2207.18)
	wantNear(t, "memory ops/s", r.OpsPerSec, 2260154.38)

	r = parseSysbenchFixture(t, "1.0.20-fileio-seqwr.txt")
	wantNear(t, "seqwr writes/s", r.WritesPerSec, 6278.34)
	wantNear(t, "seqwr MiB/s", r.WriteMiBPerSec, 98.10)
	r = parseSysbenchFixture(t, "1.0.20-fileio-seqrd.txt")
	wantNear(t, "seqrd reads/s", r.ReadsPerSec, 141263.93)
	wantNear(t, "seqrd MiB/s", r.ReadMiBPerSec, 2207.25)

	r = parseSysbenchFixture(t, "1.0.20-oltp_point_select.txt")
	wantNear(t, "tps", r.TPS, 26031.37)
	wantNear(t, "qps", r.QPS, 26031.37)
	wantNear(t, "oltp p95", r.LatP95Ms, 21.11)
	if !r.Has["errors_per_sec"] || r.ErrorsPerSec != 0 {
		t.Errorf("ignored errors: %v %v", r.Has["errors_per_sec"], r.ErrorsPerSec)
	}

	// threads prints no rate: derived from events over time.
	r = parseSysbenchFixture(t, "1.0.20-threads.txt")
	wantNear(t, "threads events/s", r.EventsPerSec, 3850/1.0053)
	wantNear(t, "threads p95", r.LatP95Ms, 3.75)
	r = parseSysbenchFixture(t, "1.0.20-mutex.txt")
	wantNear(t, "mutex total time", r.TotalTime, 0.8872)
}

// 0.4/0.5 print counts and units that 1.0 dropped; rates come from the
// total time, and "Mb" is MiB.
func TestParseSysbenchLegacy(t *testing.T) {
	r := parseSysbenchFixture(t, "0.4.12-cpu.txt")
	if r.Version != "0.4.12" {
		t.Errorf("version %q", r.Version)
	}
	wantNear(t, "0.4 cpu events/s", r.EventsPerSec, 3852/1.0007)
	wantNear(t, "0.4 cpu p95 (approx. 95 percentile, ms suffix)", r.LatP95Ms, 0.61)
	wantNear(t, "0.4 cpu max", r.LatMaxMs, 20.25)

	r = parseSysbenchFixture(t, "0.4.12-memory.txt")
	wantNear(t, "0.4 memory MB/sec", r.MiBPerSec, 2139.21)
	wantNear(t, "0.4 memory ops/sec", r.OpsPerSec, 2190553.30)

	r = parseSysbenchFixture(t, "0.4.12-fileio-rndrw.txt")
	wantNear(t, "0.4 fileio reads/s", r.ReadsPerSec, 5999/1.0001)
	wantNear(t, "0.4 fileio writes/s", r.WritesPerSec, 4001/1.0001)
	wantNear(t, "0.4 fileio read MiB/s", r.ReadMiBPerSec, 93.734/1.0001)
	wantNear(t, "0.4 fileio written MiB/s", r.WriteMiBPerSec, 62.516/1.0001)

	r = parseSysbenchFixture(t, "0.5-fileio-seqrd.txt")
	wantNear(t, "0.5 fileio reads/s (lower-case 'reads')", r.ReadsPerSec, 4096/0.0195)
	wantNear(t, "0.5 fileio written (0b)", r.WriteMiBPerSec, 0)
	wantNear(t, "0.5 response time p95", r.LatP95Ms, 0.01)

	r = parseSysbenchFixture(t, "0.5-oltp.txt")
	wantNear(t, "0.5 tps", r.TPS, 25770.41)
	wantNear(t, "0.5 read/write requests as qps", r.QPS, 25770.41)
	wantNear(t, "0.5 p95", r.LatP95Ms, 17.93)
}

func TestParseSysbenchFailures(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"1.0.20-cpu-badarg.txt", "Invalid value of cpu-max-prime"},
		{"1.0.20-unknown-test.txt", "Cannot find benchmark"},
		{"1.0.20-oltp-noserver.txt", "unable to connect to MySQL server"},
		{"1.0.20-oltp-nodb.txt", "Unknown database"},
		{"1.0.20-cpu-killed.txt", "no sysbench statistics"},
	} {
		r, err := ParseSysbench(string(fixture(t, "sysbench", c.file)))
		if err == nil {
			t.Errorf("%s: no error", c.file)
			continue
		}
		if !errors.Is(err, errParse) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not say %q", c.file, err, c.want)
		}
		if r == nil {
			t.Errorf("%s: no partial result", c.file)
		}
	}
}

func FuzzParseSysbench(f *testing.F) {
	seedFixtures(f, "sysbench")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseSysbench(string(b))
		if err == nil && len(r.Has) == 0 {
			t.Fatal("success without any value")
		}
	})
}
