package tools

import (
	"strings"
	"testing"
)

func TestParseFio3(t *testing.T) {
	r, err := ParseFio(fixture(t, "fio", "3.33-four-jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "3.33" || len(r.Jobs) != 4 {
		t.Fatalf("version %q, %d jobs", r.Version, len(r.Jobs))
	}
	rd, _ := r.Job("read")
	wantNear(t, "read iops", rd.Read.IOPS, 2396.603397)
	wantNear(t, "read MiB/s (bw KiB/s / 1024)", rd.Read.MiBPerSec, 2454121.0/1024)
	wantNear(t, "read clat p99 µs (clat_ns)", rd.Read.ClatP99Us, 1761.280)
	rw, _ := r.Job("randwrite")
	wantNear(t, "randwrite iops", rw.Write.IOPS, 17081.918082)
	wantNear(t, "randwrite clat p99 µs", rw.Write.ClatP99Us, 148.480)
	if rw.Write.Ops == 0 || rw.Read.Ops != 0 {
		t.Errorf("randwrite ops: write %v read %v", rw.Write.Ops, rw.Read.Ops)
	}
}

// fio 2.x: "clat" in µs instead of "clat_ns", io_bytes in KiB, no
// total_ios; the numbers must come out in the same units.
func TestParseFio2(t *testing.T) {
	r, err := ParseFio(fixture(t, "fio", "2.2.10-four-jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "2.2.10" {
		t.Errorf("version %q", r.Version)
	}
	rd, _ := r.Job("read")
	wantNear(t, "fio2 read iops", rd.Read.IOPS, 2396.603397)
	wantNear(t, "fio2 read MiB/s", rd.Read.MiBPerSec, 2454121.0/1024)
	wantNear(t, "fio2 read clat p99 µs (clat)", rd.Read.ClatP99Us, 1761)
	if !rd.Read.HasP99 || rd.Read.Ops <= 0 {
		t.Errorf("fio2 read: p99 %v ops %v", rd.Read.HasP99, rd.Read.Ops)
	}
}

func TestParseFioFailures(t *testing.T) {
	r, err := ParseFio(fixture(t, "fio", "3.33-job-error.json"))
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := r.Job("write"); j.Error != 5 {
		t.Errorf("write job error = %d, want 5", j.Error)
	}
	ferr := fioJobErrors(result{}, []string{"fio"}, r)
	if ferr == nil || !strings.Contains(ferr.Error(), "job write failed with error 5") {
		t.Errorf("job error not reported: %v", ferr)
	}
	// A warning line before the JSON is skipped.
	if r, err := ParseFio(fixture(t, "fio", "3.33-warning-prefix.json")); err != nil || len(r.Jobs) != 1 {
		t.Errorf("warning prefix: %v", err)
	}
	for _, f := range []string{"3.33-truncated.json", "3.33-badopt.txt"} {
		if _, err := ParseFio(fixture(t, "fio", f)); err == nil {
			t.Errorf("%s parsed", f)
		}
	}
}

func FuzzParseFio(f *testing.F) {
	seedFixtures(f, "fio")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseFio(b)
		if err == nil && len(r.Jobs) == 0 {
			t.Fatal("success without jobs")
		}
	})
}
