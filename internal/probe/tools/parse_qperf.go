package tools

import (
	"strconv"
	"strings"
)

// QperfResult is qperf's report: per test ("tcp_bw"), per quantity
// ("bw", "latency", "msg_rate", "recv_bw"), a value in base units.
//
// Format. qperf prints "TEST:" and then "    key  =  value unit" lines,
// with thousands separators ("393,440") and adaptive units: bandwidth in
// bytes/KB/MB/GB/TB per sec (powers of 1000), or bits/Kb/Mb/Gb per sec
// with --use_bits_per_sec (-ub); latency in ns/us/ms/sec; rates in
// /sec, K/sec, M/sec, G/sec. -v adds msg_rate, msg_size, time, costs and
// CPU use. A test that could not run prints a line without " = " under
// its header ("127.0.0.1: failed to connect"); an unknown test prints
// "NAME: bad test; try: qperf --help tests". The layout is the same in the
// 0.4.x releases distributions ship (0.4.9 in RHEL 7/8, 0.4.11 in Debian 12).
type QperfResult struct {
	Tests  map[string]map[string]float64
	Errors []string
}

var qperfLineRE = lazyRegexp(`^\s+([a-z_]+)\s+=\s+([\d,.]+)\s*(\S*)`)

// qperfScale converts a qperf unit to the base unit: bytes/s for
// bandwidth, µs for latency, 1/s for rates. ok is false for units that are
// not one of those (bytes, % cpus, ms/GB), which are kept unscaled.
func qperfScale(unit string) (float64, bool) {
	switch unit {
	case "bytes/sec":
		return 1, true
	case "KB/sec":
		return 1e3, true
	case "MB/sec":
		return 1e6, true
	case "GB/sec":
		return 1e9, true
	case "TB/sec":
		return 1e12, true
	case "bits/sec":
		return 1.0 / 8, true
	case "Kb/sec":
		return 1e3 / 8, true
	case "Mb/sec":
		return 1e6 / 8, true
	case "Gb/sec":
		return 1e9 / 8, true
	case "Tb/sec":
		return 1e12 / 8, true
	case "ns":
		return 1e-3, true
	case "us":
		return 1, true
	case "ms":
		return 1e3, true
	case "sec":
		return 1e6, true
	case "/sec":
		return 1, true
	case "K/sec":
		return 1e3, true
	case "M/sec":
		return 1e6, true
	case "G/sec":
		return 1e9, true
	}
	return 1, false
}

// ParseQperf parses qperf's client output.
func ParseQperf(out string) (*QperfResult, error) {
	r := &QperfResult{Tests: map[string]map[string]float64{}}
	test := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			t := strings.TrimSpace(line)
			if strings.HasSuffix(t, ":") && !strings.Contains(t, " ") {
				test = strings.TrimSuffix(t, ":")
				if r.Tests[test] == nil {
					r.Tests[test] = map[string]float64{}
				}
				continue
			}
			r.Errors = append(r.Errors, qperfPrefix(test)+t)
			continue
		}
		m := qperfLineRE().FindStringSubmatch(line)
		if m == nil || test == "" {
			r.Errors = append(r.Errors, qperfPrefix(test)+strings.TrimSpace(line))
			continue
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		if err != nil {
			continue
		}
		scale, _ := qperfScale(m[3])
		r.Tests[test][m[1]] = v * scale
	}
	ok := false
	for _, kv := range r.Tests {
		ok = ok || len(kv) > 0
	}
	if !ok {
		if len(r.Errors) > 0 {
			return r, parseErrorf("qperf: %s", strings.Join(r.Errors, "; "))
		}
		return r, parseErrorf("no qperf results in the output")
	}
	return r, nil
}

func qperfPrefix(test string) string {
	if test == "" {
		return ""
	}
	return test + ": "
}
