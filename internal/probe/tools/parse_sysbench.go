package tools

import (
	"strconv"
	"strings"
)

// SysbenchResult is what sysbench printed for one run of one test. Fields
// a test does not print stay zero; Has records which were seen.
//
// Formats. sysbench 1.0 prints "events per second", "Total operations: N
// (R per second)", "X MiB transferred (R MiB/sec)", a "File operations"
// block with reads/s, writes/s, fsyncs/s and a "Throughput" block in MiB/s,
// "SQL statistics" with transactions and queries per second, and a
// "Latency (ms):" block of bare numbers. 0.4 and 0.5 print no events per
// second for cpu and threads (derived here as events / total time),
// "Operations performed: N (R ops/sec)" and "X MB transferred (R MB/sec)"
// for memory, "Operations performed: R Read, W Write, O Other = T Total"
// and "Read 93.7Mb  Written 62.5Mb …" for fileio (rates derived over the
// total time), "OLTP test statistics" with "read/write requests" (0.5),
// and latency as "per-request statistics:" (0.4) or "response time:" (0.5)
// with an "ms" suffix. Their "Mb"/"MB" are 2^20 bytes, as 1.0's "MiB".
type SysbenchResult struct {
	Version   string
	TotalTime float64 // seconds
	Events    float64

	EventsPerSec float64 // printed by 1.0 cpu, else Events/TotalTime

	OpsPerSec float64 // memory: operations per second
	MiBPerSec float64 // memory: MiB transferred per second

	ReadsPerSec, WritesPerSec, FsyncsPerSec float64 // fileio
	ReadMiBPerSec, WriteMiBPerSec           float64 // fileio

	TPS, QPS, ErrorsPerSec float64 // oltp

	LatMinMs, LatAvgMs, LatMaxMs, LatP95Ms float64

	Fatal []string // FATAL: lines, in order
	Has   map[string]bool
}

var (
	sbVersionRE   = lazyRegexp(`^sysbench (\d+\.\d+(?:\.\d+)?)`)
	sbNumRE       = lazyRegexp(`[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)
	sbMemOpsRE    = lazyRegexp(`^(?:Total operations|Operations performed):\s*([\d.]+)\s*\(\s*([\d.]+)\s*(?:per second|ops/sec)\)`)
	sbMemMiBRE    = lazyRegexp(`^([\d.]+)\s*(?:MiB|MB) transferred\s*\(\s*([\d.]+)\s*(?:MiB|MB)/sec\)`)
	sbFileOps04RE = lazyRegexp(`(?i)^Operations performed:\s*(\d+)\s+reads?,\s*(\d+)\s+writes?,\s*(\d+)\s+other`)
	sbFileMB04RE  = lazyRegexp(`^Read\s+([\d.]+)([KMGT]?b)\s+Written\s+([\d.]+)([KMGT]?b)`)
	sbPerSecRE    = lazyRegexp(`^\s*(\d+)\s*\(\s*([\d.]+)\s+per sec\.\)`)
)

// ParseSysbench parses the text sysbench prints for cpu, memory, threads,
// mutex, fileio and the OLTP scripts.
func ParseSysbench(out string) (*SysbenchResult, error) {
	r := &SysbenchResult{Has: map[string]bool{}}
	set := func(k string, dst *float64, v float64) {
		*dst = v
		r.Has[k] = true
	}
	var fileRead, fileWrite, fileReadMiB, fileWriteMiB float64
	var haveFile04, haveFileMB04 bool
	latBlock := false
	for _, raw := range strings.Split(stripANSI(out), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		if m := sbVersionRE().FindStringSubmatch(line); m != nil && r.Version == "" {
			r.Version = m[1]
			continue
		}
		if strings.HasPrefix(line, "FATAL:") {
			r.Fatal = append(r.Fatal, strings.TrimSpace(strings.TrimPrefix(line, "FATAL:")))
			continue
		}
		key, val, hasColon := strings.Cut(line, ":")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		// Latency blocks: 1.0 "Latency (ms):", 0.4 "per-request
		// statistics:", 0.5 "response time:".
		if hasColon && val == "" && (strings.HasPrefix(key, "latency") || key == "per-request statistics" || key == "response time") {
			latBlock = true
			continue
		}
		if latBlock && hasColon {
			ms, ok := sbLatencyMs(val)
			switch {
			case key == "min" && ok:
				set("lat_min", &r.LatMinMs, ms)
				continue
			case key == "avg" && ok:
				set("lat_avg", &r.LatAvgMs, ms)
				continue
			case key == "max" && ok:
				set("lat_max", &r.LatMaxMs, ms)
				continue
			case strings.Contains(key, "95") && ok:
				set("lat_p95", &r.LatP95Ms, ms)
				continue
			case key == "sum":
				continue
			}
			latBlock = false
		}
		switch {
		case key == "total time" && hasColon:
			if v, ok := firstNum(val); ok {
				set("total_time", &r.TotalTime, v)
			}
		case key == "total number of events" && hasColon:
			if v, ok := firstNum(val); ok {
				set("events", &r.Events, v)
			}
		case key == "events per second" && hasColon:
			if v, ok := firstNum(val); ok {
				set("events_per_sec", &r.EventsPerSec, v)
			}
		case key == "reads/s":
			if v, ok := firstNum(val); ok {
				set("reads_per_sec", &r.ReadsPerSec, v)
			}
		case key == "writes/s":
			if v, ok := firstNum(val); ok {
				set("writes_per_sec", &r.WritesPerSec, v)
			}
		case key == "fsyncs/s":
			if v, ok := firstNum(val); ok {
				set("fsyncs_per_sec", &r.FsyncsPerSec, v)
			}
		case strings.HasPrefix(line, "read, MiB/s:"):
			if v, ok := firstNum(strings.TrimPrefix(line, "read, MiB/s:")); ok {
				set("read_mib_per_sec", &r.ReadMiBPerSec, v)
			}
		case strings.HasPrefix(line, "written, MiB/s:"):
			if v, ok := firstNum(strings.TrimPrefix(line, "written, MiB/s:")); ok {
				set("write_mib_per_sec", &r.WriteMiBPerSec, v)
			}
		case key == "transactions" && hasColon:
			if m := sbPerSecRE().FindStringSubmatch(val); m != nil {
				v, _ := strconv.ParseFloat(m[2], 64)
				set("tps", &r.TPS, v)
			}
		case (key == "queries" || key == "read/write requests") && hasColon:
			if m := sbPerSecRE().FindStringSubmatch(val); m != nil {
				v, _ := strconv.ParseFloat(m[2], 64)
				set("qps", &r.QPS, v)
			}
		case key == "ignored errors" && hasColon:
			if m := sbPerSecRE().FindStringSubmatch(val); m != nil {
				v, _ := strconv.ParseFloat(m[2], 64)
				set("errors_per_sec", &r.ErrorsPerSec, v)
			}
		default:
			if m := sbFileOps04RE().FindStringSubmatch(line); m != nil {
				fileRead, _ = strconv.ParseFloat(m[1], 64)
				fileWrite, _ = strconv.ParseFloat(m[2], 64)
				haveFile04 = true
			} else if m := sbMemOpsRE().FindStringSubmatch(line); m != nil {
				v, _ := strconv.ParseFloat(m[2], 64)
				set("ops_per_sec", &r.OpsPerSec, v)
			} else if m := sbMemMiBRE().FindStringSubmatch(line); m != nil {
				v, _ := strconv.ParseFloat(m[2], 64)
				set("mib_per_sec", &r.MiBPerSec, v)
			} else if m := sbFileMB04RE().FindStringSubmatch(line); m != nil {
				fileReadMiB = sbMiB(m[1], m[2])
				fileWriteMiB = sbMiB(m[3], m[4])
				haveFileMB04 = true
			}
		}
	}
	// 0.4/0.5 give counts; rates are over the total time.
	if r.TotalTime > 0 {
		if !r.Has["events_per_sec"] && r.Has["events"] {
			set("events_per_sec", &r.EventsPerSec, r.Events/r.TotalTime)
		}
		if haveFile04 && !r.Has["reads_per_sec"] {
			set("reads_per_sec", &r.ReadsPerSec, fileRead/r.TotalTime)
			set("writes_per_sec", &r.WritesPerSec, fileWrite/r.TotalTime)
		}
		if haveFileMB04 && !r.Has["read_mib_per_sec"] {
			set("read_mib_per_sec", &r.ReadMiBPerSec, fileReadMiB/r.TotalTime)
			set("write_mib_per_sec", &r.WriteMiBPerSec, fileWriteMiB/r.TotalTime)
		}
	}
	if len(r.Has) == 0 {
		if len(r.Fatal) > 0 {
			return r, parseErrorf("sysbench reported: %s", strings.Join(r.Fatal, "; "))
		}
		return r, parseErrorf("no sysbench statistics in the output")
	}
	return r, nil
}

// sbLatencyMs reads "0.52" (1.0, ms implied) or "1.02ms" / "1.2s" (0.4).
func sbLatencyMs(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	mult := 1.0
	switch {
	case strings.HasSuffix(v, "ms"):
		v = strings.TrimSuffix(v, "ms")
	case strings.HasSuffix(v, "us"):
		v, mult = strings.TrimSuffix(v, "us"), 0.001
	case strings.HasSuffix(v, "s"):
		v, mult = strings.TrimSuffix(v, "s"), 1000
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, false
	}
	return f * mult, true
}

// sbMiB converts sysbench 0.4's "93.734Mb" (binary units) to MiB.
func sbMiB(num, unit string) float64 {
	f, _ := strconv.ParseFloat(num, 64)
	switch strings.ToUpper(unit) {
	case "B":
		return f / (1 << 20)
	case "KB":
		return f / 1024
	case "GB":
		return f * 1024
	case "TB":
		return f * 1024 * 1024
	}
	return f
}

func firstNum(s string) (float64, bool) {
	m := sbNumRE().FindString(s)
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(m, 64)
	return f, err == nil
}
