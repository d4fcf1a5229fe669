package tools

import (
	"strings"
	"testing"
)

func TestParseIperf3(t *testing.T) {
	r, err := ParseIperf3(fixture(t, "iperf3", "3.12-tcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "3.12" || r.Protocol != "TCP" {
		t.Errorf("version %q protocol %q", r.Version, r.Protocol)
	}
	wantNear(t, "tcp received bits/s", r.RecvBps, 5167995879.224009)
	wantNear(t, "tcp retransmits", r.Retransmits, 6)

	r, err = ParseIperf3(fixture(t, "iperf3", "3.12-udp.json"))
	if err != nil {
		t.Fatal(err)
	}
	// 3.12: sum_received has the receiver's view.
	wantNear(t, "udp recv pps", r.RecvPPS(), (35005-26420)/1.021519)
	wantNear(t, "udp recv bits/s", r.RecvBps, 4302925.34940613)
	wantNear(t, "udp sent bits/s", r.SentBps, 17728282.87523625)
}

// iperf3 3.7: no end.sum_sent/sum_received for UDP, only end.sum with the
// sender's bytes and the receiver's loss.
func TestParseIperf37(t *testing.T) {
	r, err := ParseIperf3(fixture(t, "iperf3", "3.7-udp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "3.7" || r.Protocol != "UDP" {
		t.Errorf("version %q protocol %q", r.Version, r.Protocol)
	}
	wantNear(t, "3.7 udp recv pps", r.RecvPPS(), (35010-26420)/1.021519)
	wantNear(t, "3.7 udp recv bits/s from loss", r.RecvBps, 17728282.87523625*(1-75.46415309911454/100))
	r, err = ParseIperf3(fixture(t, "iperf3", "3.7-tcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	wantNear(t, "3.7 tcp received bits/s", r.RecvBps, 5167995879.224009)
}

func TestParseIperf3Failures(t *testing.T) {
	_, err := ParseIperf3(fixture(t, "iperf3", "3.12-noserver.json"))
	if err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("noserver: %v", err)
	}
	if _, err := ParseIperf3(fixture(t, "iperf3", "3.12-killed.json")); err == nil {
		t.Error("empty output parsed")
	}
}

func FuzzParseIperf3(f *testing.F) {
	seedFixtures(f, "iperf3")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseIperf3(b)
		if err == nil && r.Protocol == "" {
			t.Fatal("success without a protocol")
		}
	})
}
