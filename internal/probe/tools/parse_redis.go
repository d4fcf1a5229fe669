package tools

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
)

// RedisBenchResult is redis-benchmark's result per test, keyed by the
// normalised test name ("ping_inline", "ping_mbulk", "set", "get").
//
// Formats. With --csv, redis-benchmark ≥ 6.2 prints a header
// "test","rps","avg_latency_ms",…,"p50_latency_ms",…,"max_latency_ms" and
// one row per test; 6.0 and older print no header and two columns,
// "SET","94339.62". With -q, 7.x prints "SET: 595238.12 requests per
// second, p50=0.967 msec" and older releases "SET: 94339.62 requests per
// second"; both overwrite a progress line with carriage returns first.
// Before 3.x the multi-bulk ping was called PING_BULK; it is reported as
// ping_mbulk. Lines that are neither (WARNING: …, "Could not connect …")
// are kept as messages.
type RedisBenchResult struct {
	RPS      map[string]float64
	P50Ms    map[string]float64 // only where the version prints it
	Messages []string
}

var redisQuietRE = lazyRegexp(`^([A-Za-z_][A-Za-z0-9_ .:-]*?):\s+([\d.]+) requests per second(?:, p50=([\d.]+) msec)?`)

// redisTestName normalises redis-benchmark's test names.
func redisTestName(s string) string {
	n := strings.ToLower(strings.TrimSpace(s))
	if n == "ping_bulk" {
		return "ping_mbulk"
	}
	// "LPUSH (needed to benchmark LRANGE)" and the like.
	if i := strings.IndexByte(n, ' '); i > 0 {
		n = n[:i]
	}
	return n
}

// ParseRedisBenchmark parses --csv or -q output (or the two mixed, as when
// several processes' outputs are concatenated).
func ParseRedisBenchmark(out string) (*RedisBenchResult, error) {
	r := &RedisBenchResult{RPS: map[string]float64{}, P50Ms: map[string]float64{}}
	var header []string
	for _, raw := range strings.Split(out, "\n") {
		// -q output redraws a progress line with \r; the result is last.
		if i := strings.LastIndexByte(raw, '\r'); i >= 0 {
			raw = raw[i+1:]
		}
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			rec, err := csv.NewReader(strings.NewReader(line)).Read()
			if err != nil && err != io.EOF {
				r.Messages = append(r.Messages, line)
				continue
			}
			if len(rec) >= 2 && rec[0] == "test" && rec[1] == "rps" {
				header = rec
				continue
			}
			if len(rec) < 2 {
				r.Messages = append(r.Messages, line)
				continue
			}
			rps, err := strconv.ParseFloat(rec[1], 64)
			if err != nil {
				r.Messages = append(r.Messages, line)
				continue
			}
			name := redisTestName(rec[0])
			r.RPS[name] = rps
			for i, h := range header {
				if h == "p50_latency_ms" && i < len(rec) {
					if v, err := strconv.ParseFloat(rec[i], 64); err == nil {
						r.P50Ms[name] = v
					}
				}
			}
			continue
		}
		if m := redisQuietRE().FindStringSubmatch(line); m != nil {
			rps, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				continue
			}
			name := redisTestName(m[1])
			r.RPS[name] = rps
			if m[3] != "" {
				if v, err := strconv.ParseFloat(m[3], 64); err == nil {
					r.P50Ms[name] = v
				}
			}
			continue
		}
		r.Messages = append(r.Messages, line)
	}
	if len(r.RPS) == 0 {
		if len(r.Messages) > 0 {
			return r, parseErrorf("redis-benchmark printed no results: %s", strings.Join(r.Messages, "; "))
		}
		return r, parseErrorf("redis-benchmark printed nothing")
	}
	return r, nil
}
