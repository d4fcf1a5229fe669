package tools

import (
	"strconv"
	"strings"
)

// WrkResult is what wrk printed.
//
// Formats. wrk 4.x prints "Requests/sec:", "N requests in 1.06s, …",
// a "Thread Stats" table whose Latency row is avg/stdev/max, and with
// --latency a "Latency Distribution" of 50/75/90/99%. wrk2 (the
// constant-throughput fork, also reporting as 4.0.0) prints the
// distribution as "Latency Distribution (HdrHistogram - Recorded Latency)"
// with keys like "99.000%" followed by a "Detailed Percentile spectrum"
// table that is not parsed. Older wrk 3.x prints the same summary lines.
// Durations carry units us, ms, s, m or h. Failures are reported as
// "Non-2xx or 3xx responses: N", "Socket errors: connect A, read B, write
// C, timeout D", or, when nothing connected, "unable to connect to …".
type WrkResult struct {
	Requests       float64
	Seconds        float64
	RequestsPerSec float64
	LatencyAvgMs   float64
	LatencyMaxMs   float64
	Percentiles    map[float64]float64 // percentile → ms
	Non2xx         float64
	SocketErrors   float64 // connect + read + write + timeout
	ConnectError   string
}

var (
	wrkReqRE     = lazyRegexp(`^(\d+) requests in ([\d.]+\w+),`)
	wrkRPSRE     = lazyRegexp(`^Requests/sec:\s*([\d.]+)`)
	wrkLatRE     = lazyRegexp(`^Latency\s+([\d.]+\w+)\s+([\d.]+\w+)\s+([\d.]+\w+)`)
	wrkPctRE     = lazyRegexp(`^([\d.]+)%\s+([\d.]+\w+)$`)
	wrkNon2xxRE  = lazyRegexp(`^Non-2xx or 3xx responses:\s*(\d+)`)
	wrkSockErrRE = lazyRegexp(`^Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// ParseWrk parses wrk's (or wrk2's) text output.
func ParseWrk(out string) (*WrkResult, error) {
	r := &WrkResult{Percentiles: map[float64]float64{}}
	haveRPS, inDist := false, false
	for _, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "unable to connect"):
			r.ConnectError = line
		case strings.HasPrefix(line, "Latency Distribution"):
			inDist = true
			continue
		case strings.HasPrefix(line, "Detailed Percentile spectrum"):
			inDist = false
		}
		if m := wrkRPSRE().FindStringSubmatch(line); m != nil {
			r.RequestsPerSec, _ = strconv.ParseFloat(m[1], 64)
			haveRPS = true
		} else if m := wrkReqRE().FindStringSubmatch(line); m != nil {
			r.Requests, _ = strconv.ParseFloat(m[1], 64)
			if ms, ok := wrkDurationMs(m[2]); ok {
				r.Seconds = ms / 1000
			}
		} else if m := wrkLatRE().FindStringSubmatch(line); m != nil && !inDist {
			r.LatencyAvgMs, _ = wrkDurationMs(m[1])
			r.LatencyMaxMs, _ = wrkDurationMs(m[3])
		} else if m := wrkPctRE().FindStringSubmatch(line); m != nil && inDist {
			p, err := strconv.ParseFloat(m[1], 64)
			if ms, ok := wrkDurationMs(m[2]); ok && err == nil {
				r.Percentiles[p] = ms
			}
		} else if m := wrkNon2xxRE().FindStringSubmatch(line); m != nil {
			r.Non2xx, _ = strconv.ParseFloat(m[1], 64)
		} else if m := wrkSockErrRE().FindStringSubmatch(line); m != nil {
			for _, s := range m[1:] {
				v, _ := strconv.ParseFloat(s, 64)
				r.SocketErrors += v
			}
		}
	}
	if !haveRPS {
		if r.ConnectError != "" {
			return r, parseErrorf("wrk: %s", r.ConnectError)
		}
		return r, parseErrorf("no Requests/sec line in wrk's output")
	}
	return r, nil
}

// wrkDurationMs converts wrk's "845.00us", "9.02ms", "1.06s", "1.50m".
func wrkDurationMs(s string) (float64, bool) {
	i := strings.IndexFunc(s, func(c rune) bool { return (c < '0' || c > '9') && c != '.' })
	if i <= 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	switch s[i:] {
	case "us":
		return v / 1000, true
	case "ms":
		return v, true
	case "s":
		return v * 1000, true
	case "m":
		return v * 60000, true
	case "h":
		return v * 3600000, true
	}
	return 0, false
}
