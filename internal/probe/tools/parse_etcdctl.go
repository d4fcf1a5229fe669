package tools

import (
	"regexp"
	"strconv"
	"strings"
)

// EtcdCheckPerfResult is `etcdctl check perf`'s verdict and figures.
type EtcdCheckPerfResult struct {
	Pass       bool
	Throughput float64 // writes/s
	Slowest    float64 // s
	Stddev     float64 // s
	Failed     []string
}

var (
	ecpThroughputRe = lazyRegexp(`Throughput (?:is|too low:) ([0-9.]+) writes/s`)
	ecpSlowestRe    = lazyRegexp(`Slowest request took(?: too long:)? ([0-9.eE+-]+)s`)
	ecpStddevRe     = lazyRegexp(`Stddev (?:is|too high:) ([0-9.eE+-]+)s`)
)

// ParseEtcdCheckPerf reads etcdctl 3.4/3.5 check perf output:
//
//	PASS: Throughput is 151 writes/s
//	PASS: Slowest request took 0.217437s
//	PASS: Stddev is 0.021341s
//	PASS
//
// or, failing, "FAIL: Throughput too low: 133 writes/s", "Slowest request
// took too long: 0.767303s" (3.4 prints that one without "FAIL:"),
// "FAIL: Stddev too high: 0.5s" and a last line FAIL. The progress bar
// before them (overwritten with \r) is ignored.
func ParseEtcdCheckPerf(out string) (EtcdCheckPerfResult, error) {
	var r EtcdCheckPerfResult
	var verdict, tp, sl, sd bool
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", "\n"), "\n") {
		line = strings.TrimSpace(line)
		num := func(re *regexp.Regexp, dst *float64, seen *bool) bool {
			m := re.FindStringSubmatch(line)
			if m == nil {
				return false
			}
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil || v < 0 {
				return false
			}
			*dst, *seen = v, true
			if strings.HasPrefix(line, "FAIL") || strings.Contains(line, "too ") {
				r.Failed = append(r.Failed, line)
			}
			return true
		}
		switch {
		case line == "PASS":
			r.Pass, verdict = true, true
		case line == "FAIL":
			r.Pass, verdict = false, true
		case num(ecpThroughputRe(), &r.Throughput, &tp), num(ecpSlowestRe(), &r.Slowest, &sl), num(ecpStddevRe(), &r.Stddev, &sd):
		}
	}
	if !verdict || !tp || !sl || !sd {
		return r, parseErrorf("no PASS/FAIL verdict with throughput, slowest request and stddev")
	}
	if r.Pass && len(r.Failed) > 0 {
		return r, parseErrorf("PASS although %q", r.Failed[0])
	}
	return r, nil
}
