package tools

import (
	"strings"
	"testing"
)

func TestParseQperf(t *testing.T) {
	r, err := ParseQperf(string(fixture(t, "qperf", "0.4.11-v-msg1.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "tcp_bw bw (1.15 MB/sec)", r.Tests["tcp_bw"]["bw"], 1.15e6)
	wantNear(t, "tcp_bw msg_rate (1.15 M/sec)", r.Tests["tcp_bw"]["msg_rate"], 1.15e6)
	wantNear(t, "tcp_bw send_cost has its separator removed (1,554)", r.Tests["tcp_bw"]["send_cost"], 1554)
	wantNear(t, "tcp_lat latency (30.8 us)", r.Tests["tcp_lat"]["latency"], 30.8)
	wantNear(t, "udp_bw recv_bw (270 KB/sec)", r.Tests["udp_bw"]["recv_bw"], 270e3)
	wantNear(t, "udp_lat latency", r.Tests["udp_lat"]["latency"], 22.5)

	r, err = ParseQperf(string(fixture(t, "qperf", "0.4.11-v-64k.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "64K tcp_bw (2.09 GB/sec)", r.Tests["tcp_bw"]["bw"], 2.09e9)
	wantNear(t, "64K udp_bw recv is zero", r.Tests["udp_bw"]["recv_bw"], 0)
}

// qperf 0.4.9 as RHEL ships it, run with -ub (bits) and without -v;
// latency in ms.
func TestParseQperfBitsAndOlder(t *testing.T) {
	r, err := ParseQperf(string(fixture(t, "qperf", "0.4.9-ub.txt")))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "9.38 Gb/sec in bytes/s", r.Tests["tcp_bw"]["bw"], 9.38e9/8)
	wantNear(t, "udp_lat 1.02 ms in µs", r.Tests["udp_lat"]["latency"], 1020)
	if _, ok := r.Tests["tcp_bw"]["msg_rate"]; ok {
		t.Error("msg_rate without -v")
	}
}

func TestParseQperfFailures(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"0.4.11-noserver.txt", "tcp_lat: 127.0.0.1: failed to connect"},
		{"0.4.11-badtest.txt", "bad test"},
	} {
		_, err := ParseQperf(string(fixture(t, "qperf", c.file)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.file, err)
		}
	}
}

func FuzzParseQperf(f *testing.F) {
	seedFixtures(f, "qperf")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseQperf(string(b))
		if err == nil && len(r.Tests) == 0 {
			t.Fatal("success without tests")
		}
	})
}
