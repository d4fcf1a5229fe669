package tools

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Iperf3Result is iperf3's -J report, reduced to the totals.
//
// Formats. For TCP every 3.x release gives end.sum_sent and
// end.sum_received (bits_per_second, and retransmits on the sending side).
// For UDP, releases before 3.11 (e.g. 3.7) give only end.sum, whose bytes
// and bits_per_second are the sender's and whose packets, lost_packets and
// lost_percent are the receiver's accounting; 3.11 and later add
// end.sum_sent and end.sum_received (esnet/iperf#1174) and keep end.sum.
// Received packets are packets − lost_packets in either layout. A failure
// is reported in a top-level "error" string, with exit status 0 in some
// releases, and the other sections partly empty.
type Iperf3Result struct {
	Version  string
	Protocol string // "TCP" or "UDP"
	Error    string

	SentBps, RecvBps float64 // bits per second
	Retransmits      float64 // TCP

	Seconds              float64 // UDP: receiver's interval
	Packets, LostPackets float64 // UDP
	LostPercent          float64
	JitterMs             float64
}

type iperf3Sum struct {
	Seconds       float64  `json:"seconds"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *float64 `json:"lost_packets"`
	Packets       *float64 `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
}

type iperf3JSON struct {
	Start struct {
		Version   string `json:"version"`
		TestStart struct {
			Protocol string `json:"protocol"`
		} `json:"test_start"`
	} `json:"start"`
	End struct {
		Sum         *iperf3Sum `json:"sum"`
		SumSent     *iperf3Sum `json:"sum_sent"`
		SumReceived *iperf3Sum `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

// ParseIperf3 parses iperf3 -J output.
func ParseIperf3(out []byte) (*Iperf3Result, error) {
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return nil, parseErrorf("no JSON document in iperf3's output")
	}
	var raw iperf3JSON
	if err := json.NewDecoder(bytes.NewReader(out[i:])).Decode(&raw); err != nil {
		return nil, parseErrorf("iperf3 JSON: %v", err)
	}
	r := &Iperf3Result{
		Version:  strings.TrimSpace(strings.TrimPrefix(raw.Start.Version, "iperf")),
		Protocol: raw.Start.TestStart.Protocol,
		Error:    raw.Error,
	}
	if r.Error != "" {
		return r, parseErrorf("iperf3 reported: %s", r.Error)
	}
	e := raw.End
	switch {
	case r.Protocol == "UDP":
		recv, sent := e.SumReceived, e.SumSent
		if recv == nil || recv.Packets == nil {
			recv = e.Sum // before 3.11: one sum with the receiver's loss accounting
		}
		if sent == nil {
			sent = e.Sum
		}
		if recv == nil || recv.Packets == nil || recv.LostPackets == nil || sent == nil {
			return r, parseErrorf("iperf3 UDP report has no end.sum with packet counts")
		}
		r.Seconds = recv.Seconds
		r.Packets, r.LostPackets = *recv.Packets, *recv.LostPackets
		if recv.LostPercent != nil {
			r.LostPercent = *recv.LostPercent
		}
		if recv.JitterMs != nil {
			r.JitterMs = *recv.JitterMs
		}
		r.SentBps = sent.BitsPerSecond
		if e.SumReceived != nil && e.SumReceived.Packets != nil {
			r.RecvBps = e.SumReceived.BitsPerSecond
		} else {
			r.RecvBps = sent.BitsPerSecond * (1 - r.LostPercent/100)
		}
	default:
		if e.SumSent == nil || e.SumReceived == nil {
			return r, parseErrorf("iperf3 TCP report has no end.sum_sent/end.sum_received")
		}
		r.Protocol = "TCP"
		r.SentBps, r.RecvBps = e.SumSent.BitsPerSecond, e.SumReceived.BitsPerSecond
		if e.SumSent.Retransmits != nil {
			r.Retransmits = *e.SumSent.Retransmits
		}
	}
	return r, nil
}

// RecvPPS is the received packet rate of a UDP test.
func (r *Iperf3Result) RecvPPS() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return (r.Packets - r.LostPackets) / r.Seconds
}

// SentPPS is the sent packet rate of a UDP test.
func (r *Iperf3Result) SentPPS() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return r.Packets / r.Seconds
}
