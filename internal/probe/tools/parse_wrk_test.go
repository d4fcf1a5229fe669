package tools

import (
	"strings"
	"testing"
)

func TestParseWrk(t *testing.T) {
	r, err := ParseWrk(string(fixture(t, "wrk", "4.1.0-keepalive.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "keepalive req/s", r.RequestsPerSec, 16911.48)
	wantNear(t, "keepalive p99 ms", r.Percentiles[99], 239.01)
	wantNear(t, "requests", r.Requests, 18593)
	wantNear(t, "seconds", r.Seconds, 1.10)
	if len(r.Percentiles) != 4 || r.Non2xx != 0 || r.SocketErrors != 0 {
		t.Errorf("percentiles %v non2xx %v sockerr %v", r.Percentiles, r.Non2xx, r.SocketErrors)
	}

	r, err = ParseWrk(string(fixture(t, "wrk", "4.1.0-404.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "404 non-2xx", r.Non2xx, 33370)
	wantNear(t, "404 p50 (845.00us)", r.Percentiles[50], 0.845)
}

// wrk2 prints an HdrHistogram distribution ("99.000%") and a spectrum
// table that must not be read as percentiles; wrk 4.2 under load prints
// socket errors and latencies in seconds.
func TestParseWrkOtherVersions(t *testing.T) {
	r, err := ParseWrk(string(fixture(t, "wrk", "4.0.0-wrk2.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "wrk2 req/s", r.RequestsPerSec, 19999.12)
	wantNear(t, "wrk2 p99", r.Percentiles[99], 2.80)
	wantNear(t, "wrk2 p99.9", r.Percentiles[99.9], 4.55)
	if len(r.Percentiles) != 8 {
		t.Errorf("wrk2 percentiles %v (spectrum rows read?)", r.Percentiles)
	}
	wantNear(t, "wrk2 avg latency (Thread Stats)", r.LatencyAvgMs, 1.19)

	r, err = ParseWrk(string(fixture(t, "wrk", "4.2.0-short-socket-errors.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "socket errors", r.SocketErrors, 39)
	r, err = ParseWrk(string(fixture(t, "wrk", "4.2.0-timeouts.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "p99 in seconds", r.Percentiles[99], 1990)
	wantNear(t, "timeouts", r.SocketErrors, 38)
}

func TestParseWrkNoServer(t *testing.T) {
	_, err := ParseWrk(string(fixture(t, "wrk", "4.1.0-noserver.txt")))
	if err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("got %v", err)
	}
	for _, s := range []string{"1.5m", "2h"} {
		if _, ok := wrkDurationMs(s); !ok {
			t.Errorf("%s not understood", s)
		}
	}
	if _, ok := wrkDurationMs("3parsecs"); ok {
		t.Error("unknown unit accepted")
	}
}

func FuzzParseWrk(f *testing.F) {
	seedFixtures(f, "wrk")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseWrk(string(b))
		if err == nil && r.RequestsPerSec < 0 {
			t.Fatal("negative rate")
		}
	})
}
