package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// colonFields parses "Key:   value" lines (/proc/PID/status,
// smaps_rollup, per-node meminfo) into a map; the first of a repeated key
// wins. Lines without a colon are skipped.
func colonFields(data []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if _, dup := m[k]; !dup {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// kib parses a "1234 kB" or plain "1234" value as KiB.
func kib(v string) (int64, error) {
	return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, "kB")), 10, 64)
}

// nodeMeminfo reads the fields of a per-node meminfo ("Node 0 MemTotal:
// 123 kB") with the "Node N " prefix dropped.
func nodeMeminfo(data []byte) map[string]string {
	out := map[string]string{}
	for k, v := range colonFields(data) {
		if f := strings.Fields(k); len(f) == 3 && f[0] == "Node" {
			k = f[2]
		}
		out[k] = v
	}
	return out
}

// rlimit is one row of /proc/PID/limits; -1 means unlimited.
type rlimit struct{ soft, hard int64 }

// parseLimits parses /proc/PID/limits. procfs's ProcLimits keeps only the
// soft limits, but the hard limit decides whether a service can raise its
// own soft limit, so both are kept here, keyed by the kernel's row name
// ("Max open files").
func parseLimits(data []byte) (map[string]rlimit, error) {
	out := map[string]rlimit{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		i := 0
		for i < len(f) && !isLimitValue(f[i]) {
			i++
		}
		if i == 0 || i+1 >= len(f) || !isLimitValue(f[i+1]) || f[0] != "Max" {
			continue // the header, or not a limits row
		}
		soft, err1 := limitValue(f[i])
		hard, err2 := limitValue(f[i+1])
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		out[strings.Join(f[:i], " ")] = rlimit{soft, hard}
	}
	if len(out) == 0 {
		return nil, errors.New("no limits rows")
	}
	return out, nil
}

func isLimitValue(s string) bool {
	if s == "unlimited" {
		return true
	}
	if s == "" || (s[0] < '0' || s[0] > '9') && s[0] != '+' {
		return false // ParseUint would fail, and allocate its error
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func limitValue(s string) (int64, error) {
	if s == "unlimited" {
		return -1, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, err
	}
	if v > 1<<62 {
		return -1, nil // RLIM_INFINITY spelled as a number
	}
	return int64(v), nil
}

// loadavg is /proc/loadavg. procfs.LoadAvg drops the run queue and task
// count fields, which the snapshot records, so the file is parsed here.
type loadavg struct {
	load1, load5, load15 float64
	running, tasks       int64
}

func parseLoadavg(s string) (loadavg, error) {
	f := strings.Fields(s)
	if len(f) < 4 {
		return loadavg{}, fmt.Errorf("loadavg: want 5 fields, got %q", s)
	}
	var l loadavg
	var err [5]error
	l.load1, err[0] = strconv.ParseFloat(f[0], 64)
	l.load5, err[1] = strconv.ParseFloat(f[1], 64)
	l.load15, err[2] = strconv.ParseFloat(f[2], 64)
	run, tasks, ok := strings.Cut(f[3], "/")
	if !ok {
		return loadavg{}, fmt.Errorf("loadavg: bad run queue field %q", f[3])
	}
	l.running, err[3] = strconv.ParseInt(run, 10, 64)
	l.tasks, err[4] = strconv.ParseInt(tasks, 10, 64)
	if e := errors.Join(err[:]...); e != nil {
		return loadavg{}, fmt.Errorf("loadavg: %w", e)
	}
	return l, nil
}

// parensChoice returns the word in parentheses, as debugfs marks the
// current preemption model: "none voluntary (full) lazy" gives "full".
func parensChoice(s string) (string, bool) {
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] == '(' && w[len(w)-1] == ')' {
			return w[1 : len(w)-1], true
		}
	}
	return "", false
}
