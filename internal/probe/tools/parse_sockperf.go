package tools

import (
	"strconv"
	"strings"
)

// SockperfResult is a sockperf ping-pong report. Latencies are in µs and,
// as sockperf reports them by default, one-way (half the round trip).
//
// Formats. sockperf 3.x prints "====> avg-latency=5.858 (std-dev=9.410)"
// (or avg-rtt= with --full-rtt) in terminal colours, even into a pipe;
// 2.x printed "====> avg-lat= 11.595 (std-dev=1.796)" without colour.
// Both print "---> percentile 99.000 =    6.800", "---> <MAX> observation
// = …", "---> <MIN> observation = …", "Total N observations" and
// "[Valid Duration] RunTime=… sec; SentMessages=…; ReceivedMessages=…".
// Errors are "sockperf: ERROR: …" lines.
type SockperfResult struct {
	Version      string
	AvgUs        float64
	StdDevUs     float64
	Percentiles  map[float64]float64
	MinUs, MaxUs float64
	Observations float64
	ValidSeconds float64
	Sent, Recv   float64
	Dropped      float64
	Errors       []string
	haveAvg      bool
}

var (
	spVersionRE = lazyRegexp(`version #?(\d+\.\d+(?:\.\d+)?)`)
	spAvgRE     = lazyRegexp(`avg-(?:latency|lat|rtt)=\s*([\d.]+)\s*\(std-dev=\s*([\d.]+)\)`)
	spPctRE     = lazyRegexp(`---> percentile\s+([\d.]+)\s*=\s*([\d.]+)`)
	spMaxRE     = lazyRegexp(`---> <MAX> observation\s*=\s*([\d.]+)`)
	spMinRE     = lazyRegexp(`---> <MIN> observation\s*=\s*([\d.]+)`)
	spTotalRE   = lazyRegexp(`Total (\d+) observations`)
	spValidRE   = lazyRegexp(`\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)`)
	spDropRE    = lazyRegexp(`# dropped messages = (\d+)`)
)

// ParseSockperf parses `sockperf ping-pong` output.
func ParseSockperf(out string) (*SockperfResult, error) {
	r := &SockperfResult{Percentiles: map[float64]float64{}}
	f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	for _, raw := range strings.Split(stripANSI(out), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		if strings.Contains(line, "ERROR") {
			r.Errors = append(r.Errors, strings.TrimSpace(strings.TrimPrefix(line, "sockperf:")))
		}
		if m := spVersionRE().FindStringSubmatch(line); m != nil && r.Version == "" && strings.Contains(line, "==") {
			r.Version = m[1]
		}
		if m := spAvgRE().FindStringSubmatch(line); m != nil {
			r.AvgUs, r.StdDevUs, r.haveAvg = f(m[1]), f(m[2]), true
		} else if m := spPctRE().FindStringSubmatch(line); m != nil {
			r.Percentiles[f(m[1])] = f(m[2])
		} else if m := spMaxRE().FindStringSubmatch(line); m != nil {
			r.MaxUs = f(m[1])
		} else if m := spMinRE().FindStringSubmatch(line); m != nil {
			r.MinUs = f(m[1])
		} else if m := spTotalRE().FindStringSubmatch(line); m != nil {
			r.Observations = f(m[1])
		} else if m := spValidRE().FindStringSubmatch(line); m != nil {
			r.ValidSeconds, r.Sent, r.Recv = f(m[1]), f(m[2]), f(m[3])
		}
		if m := spDropRE().FindStringSubmatch(line); m != nil {
			r.Dropped = f(m[1])
		}
	}
	if !r.haveAvg {
		if len(r.Errors) > 0 {
			return r, parseErrorf("sockperf: %s", strings.Join(r.Errors, "; "))
		}
		return r, parseErrorf("no avg-latency line in sockperf's output")
	}
	if len(r.Percentiles) == 0 {
		return r, parseErrorf("sockperf's output has an average but no percentiles (cut short?)")
	}
	return r, nil
}
