package tools

import (
	"strings"
	"testing"
)

func TestParseRedisBenchmark7(t *testing.T) {
	r, err := ParseRedisBenchmark(string(fixture(t, "redis-benchmark", "7.0.15-csv.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "SET csv", r.RPS["set"], 591716.00)
	wantNear(t, "PING_MBULK csv", r.RPS["ping_mbulk"], 775193.81)
	wantNear(t, "GET p50", r.P50Ms["get"], 0.903)
	if len(r.RPS) != 4 {
		t.Errorf("tests %v", r.RPS)
	}
	// -q: progress lines overwritten with \r; the final number counts.
	r, err = ParseRedisBenchmark(string(fixture(t, "redis-benchmark", "7.0.15-q.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "GET -q", r.RPS["get"], 595238.12)
	wantNear(t, "PING_INLINE -q", r.RPS["ping_inline"], 740740.69)
	wantNear(t, "SET p50 -q", r.P50Ms["set"], 0.967)
}

// Redis 5: two-column CSV without a header, PING_BULK, -q without p50;
// 6.2: a WARNING line before the header.
func TestParseRedisBenchmarkOlder(t *testing.T) {
	r, err := ParseRedisBenchmark(string(fixture(t, "redis-benchmark", "5.0.7-csv.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "5.0 csv SET", r.RPS["set"], 588235.31)
	wantNear(t, "5.0 PING_BULK as ping_mbulk", r.RPS["ping_mbulk"], 787401.56)
	if len(r.P50Ms) != 0 {
		t.Errorf("p50 invented: %v", r.P50Ms)
	}
	r, err = ParseRedisBenchmark(string(fixture(t, "redis-benchmark", "5.0.7-q.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "5.0 -q GET", r.RPS["get"], 609756.06)
	wantNear(t, "5.0 -q PING_BULK", r.RPS["ping_mbulk"], 787401.56)
	r, err = ParseRedisBenchmark(string(fixture(t, "redis-benchmark", "6.2.4-csv-warning.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "6.2 GET", r.RPS["get"], 609756.06)
	if len(r.Messages) != 1 || !strings.HasPrefix(r.Messages[0], "WARNING") {
		t.Errorf("messages %q", r.Messages)
	}
}

func TestParseRedisBenchmarkNoServer(t *testing.T) {
	_, err := ParseRedisBenchmark(string(fixture(t, "redis-benchmark", "7.0.15-noserver.txt")))
	if err == nil || !strings.Contains(err.Error(), "Could not connect") {
		t.Errorf("got %v", err)
	}
	if redisTestName("MSET (10 keys)") != "mset" {
		t.Error("MSET (10 keys) not normalised")
	}
}

func FuzzParseRedisBenchmark(f *testing.F) {
	seedFixtures(f, "redis-benchmark")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRedisBenchmark(string(b))
		if err == nil && len(r.RPS) == 0 {
			t.Fatal("success without results")
		}
	})
}
