package tools

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// FioResult is fio's --output-format=json report.
//
// Formats. fio 3.x gives completion latency as "clat_ns" (nanoseconds)
// and "io_bytes" in bytes beside "io_kbytes"; fio 2.x gives "clat" in
// microseconds and "io_bytes" in KiB. Both give "bw" in KiB/s and "iops".
// fio may print warnings ("fio: …") before the JSON document; they are
// skipped. A job that failed has a non-zero "error".
type FioResult struct {
	Version string
	Jobs    []FioJob
}

// FioJob is one job's result.
type FioJob struct {
	Name  string
	Error int
	Read  FioDir
	Write FioDir
}

// FioDir is one direction (read or write) of a job.
type FioDir struct {
	IOPS       float64
	MiBPerSec  float64
	ClatMeanUs float64
	ClatP99Us  float64
	HasP99     bool
	Ops        float64 // I/Os completed
}

type fioJSON struct {
	Version string `json:"fio version"`
	Jobs    []struct {
		Name  string     `json:"jobname"`
		Error int        `json:"error"`
		Read  fioDirJSON `json:"read"`
		Write fioDirJSON `json:"write"`
	} `json:"jobs"`
}

type fioDirJSON struct {
	IOPS     float64  `json:"iops"`
	BW       float64  `json:"bw"` // KiB/s
	TotalIOs *float64 `json:"total_ios"`
	ClatNs   *fioLat  `json:"clat_ns"` // fio ≥ 3.0
	Clat     *fioLat  `json:"clat"`    // fio 2.x, µs
	Runtime  float64  `json:"runtime"` // ms
}

type fioLat struct {
	Mean       float64            `json:"mean"`
	Percentile map[string]float64 `json:"percentile"`
}

// ParseFio parses fio's JSON output.
func ParseFio(out []byte) (*FioResult, error) {
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return nil, parseErrorf("no JSON document in fio's output")
	}
	var raw fioJSON
	if err := json.NewDecoder(bytes.NewReader(out[i:])).Decode(&raw); err != nil {
		return nil, parseErrorf("fio JSON: %v", err)
	}
	if len(raw.Jobs) == 0 {
		return nil, parseErrorf("fio JSON has no jobs")
	}
	r := &FioResult{Version: strings.TrimPrefix(raw.Version, "fio-")}
	for _, j := range raw.Jobs {
		r.Jobs = append(r.Jobs, FioJob{Name: j.Name, Error: j.Error, Read: fioDir(j.Read), Write: fioDir(j.Write)})
	}
	return r, nil
}

func fioDir(d fioDirJSON) FioDir {
	out := FioDir{IOPS: d.IOPS, MiBPerSec: d.BW / 1024}
	lat, scale := d.ClatNs, 1e-3
	if lat == nil {
		lat, scale = d.Clat, 1
	}
	if lat != nil {
		out.ClatMeanUs = lat.Mean * scale
		if p, ok := fioPercentile(lat.Percentile, 99); ok {
			out.ClatP99Us, out.HasP99 = p*scale, true
		}
	}
	if d.TotalIOs != nil {
		out.Ops = *d.TotalIOs
	} else {
		out.Ops = d.IOPS * d.Runtime / 1000
	}
	return out
}

// fioPercentile finds a percentile whatever its key's precision
// ("99.000000", "99.00").
func fioPercentile(m map[string]float64, q float64) (float64, bool) {
	for k, v := range m {
		var f float64
		if err := json.Unmarshal([]byte(k), &f); err == nil && math.Abs(f-q) < 1e-9 {
			return v, true
		}
	}
	return 0, false
}

// Job returns a job by name.
func (r *FioResult) Job(name string) (FioJob, bool) {
	for _, j := range r.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return FioJob{}, false
}
