package tools

import (
	"math"
	"strconv"
	"strings"
)

// DDResult is what dd reports on stderr when it ends: the records
// transferred (full and partial, in and out), the bytes copied and the
// elapsed seconds. The rate is computed from bytes and seconds, not read
// from dd's rounded, unit-scaled "870 MB/s".
type DDResult struct {
	FullIn, PartialIn, FullOut, PartialOut int64
	Bytes                                  int64
	Seconds                                float64
	// Errors are dd's own "dd: …" lines (a failed open, a short write).
	Errors []string
}

// MBPerSec is the transfer rate in MB/s (1e6 bytes/s), dd's unit.
func (r DDResult) MBPerSec() float64 { return float64(r.Bytes) / r.Seconds / 1e6 }

var (
	ddRecordsRe = lazyRegexp(`^(\d+)\+(\d+) records (in|out)$`)
	// coreutils ≥ 8.24: "67108864 bytes (67 MB, 64 MiB) copied, 0.108 s, 620 MB/s"
	// coreutils 8.4–8.23: "67108864 bytes (67 MB) copied, 0.108 s, 620 MB/s"
	// small counts: "512 bytes copied, 5.48e-05 s, 9.3 MB/s", "1 byte copied, …"
	ddCopiedRe = lazyRegexp(`^(\d+) bytes? (?:\([^)]*\) )?copied, ([0-9.eE+-]+) s(?:econds)?, .*$`)
)

// ParseDD reads dd's final statistics (run it with LC_ALL=C: localised dd
// translates the words and may print decimal commas). With status=progress
// the progress lines, overwritten with \r, are ignored; the last summary
// counts.
func ParseDD(out string) (DDResult, error) {
	var r DDResult
	var haveIn, haveOut, haveCopied bool
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "dd: ") {
			r.Errors = append(r.Errors, strings.TrimPrefix(line, "dd: "))
			continue
		}
		if m := ddRecordsRe().FindStringSubmatch(line); m != nil {
			full, err1 := strconv.ParseInt(m[1], 10, 64)
			part, err2 := strconv.ParseInt(m[2], 10, 64)
			if err1 != nil || err2 != nil {
				return r, parseErrorf("record count in %q", line)
			}
			if m[3] == "in" {
				r.FullIn, r.PartialIn, haveIn = full, part, true
			} else {
				r.FullOut, r.PartialOut, haveOut = full, part, true
			}
			continue
		}
		if m := ddCopiedRe().FindStringSubmatch(line); m != nil {
			b, err1 := strconv.ParseInt(m[1], 10, 64)
			s, err2 := strconv.ParseFloat(m[2], 64)
			if err1 != nil || err2 != nil || s < 0 || math.IsInf(s, 0) || math.IsNaN(s) {
				return r, parseErrorf("bytes or seconds in %q", line)
			}
			r.Bytes, r.Seconds, haveCopied = b, s, true
		}
	}
	switch {
	case len(r.Errors) > 0 && !haveCopied:
		return r, parseErrorf("dd: %s", r.Errors[0])
	case !haveIn || !haveOut || !haveCopied:
		return r, parseErrorf(`no "records in", "records out" and "bytes copied" lines`)
	case r.Seconds <= 0:
		return r, parseErrorf("dd measured no time (%g s)", r.Seconds)
	}
	return r, nil
}
