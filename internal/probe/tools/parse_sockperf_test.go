package tools

import (
	"strings"
	"testing"
)

func TestParseSockperf(t *testing.T) {
	r, err := ParseSockperf(string(fixture(t, "sockperf", "3.7-pingpong-udp.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "3.7" {
		t.Errorf("version %q", r.Version)
	}
	wantNear(t, "avg (coloured line)", r.AvgUs, 5.858)
	wantNear(t, "p50", r.Percentiles[50], 5.538)
	wantNear(t, "p99", r.Percentiles[99], 6.800)
	wantNear(t, "p99.999", r.Percentiles[99.999], 1668.988)
	wantNear(t, "observations", r.Observations, 46871)
	wantNear(t, "valid run time", r.ValidSeconds, 0.550)
	wantNear(t, "min", r.MinUs, 5.428)
}

// sockperf 2.x: "avg-lat=" without colours, percentiles with two decimals.
func TestParseSockperf2(t *testing.T) {
	r, err := ParseSockperf(string(fixture(t, "sockperf", "2.7-pingpong-udp.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "2.7" {
		t.Errorf("version %q", r.Version)
	}
	wantNear(t, "2.x avg", r.AvgUs, 11.595)
	wantNear(t, "2.x p99", r.Percentiles[99], 15.869)
	wantNear(t, "2.x p50", r.Percentiles[50], 11.280)
}

func TestParseSockperfFailures(t *testing.T) {
	// sockperf exits 0 when it cannot connect.
	_, err := ParseSockperf(string(fixture(t, "sockperf", "3.7-noserver-tcp.txt")))
	if err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("noserver: %v", err)
	}
	if _, err := ParseSockperf(string(fixture(t, "sockperf", "3.7-killed.txt"))); err == nil {
		t.Error("killed run parsed")
	}
}

func FuzzParseSockperf(f *testing.F) {
	seedFixtures(f, "sockperf")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseSockperf(string(b))
		if err == nil && !r.haveAvg {
			t.Fatal("success without an average")
		}
	})
}
