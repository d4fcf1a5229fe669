package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/run"
	"golang.org/x/perf/benchfmt"
)

// ErrNotGoBench is returned by ReadGoBench for input that holds no Go
// benchmark result.
var ErrNotGoBench = errors.New("not Go benchmark output")

// ReadGoBench reads the Go benchmark format (the output of `go test
// -bench`, as benchstat reads it) into one run per package. Each
// benchmark and unit becomes a metric named "<name> <unit>" (for example
// "Encode/size=1k-8 sec/op"); each result line is one iteration. Values and
// units are benchfmt's tidied ones (ns/op → sec/op), the same benchstat
// compares. Direction comes from the file's unit metadata or benchfmt's
// defaults; unknown units are taken as lower-is-better, since custom Go
// benchmark metrics are mostly costs per operation. File configuration
// lines (goos, goarch, cpu, pkg) become the run's parameters, so that a
// different CPU shows up in the comparison's config diff.
func ReadGoBench(r io.Reader, fileName string) ([]*run.Run, error) {
	br := benchfmt.NewReader(r, fileName)
	type mkey struct{ pkg, metric string }
	runs := map[string]*run.Run{}
	declared := map[mkey]bool{}
	iter := map[mkey]int{}
	var syntaxErrs []string
	var order []string
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			syntaxErrs = append(syntaxErrs, rec.Error())
		case *benchfmt.Result:
			pkg := rec.GetConfig("pkg")
			rn, ok := runs[pkg]
			if !ok {
				rn = newGoRun(fileName, pkg)
				runs[pkg] = rn
				order = append(order, pkg)
			}
			for _, c := range rec.Config {
				if c.File && c.Key != "pkg" {
					rn.Params[c.Key] = string(c.Value)
				}
			}
			name := rec.Name.String()
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					file, line := rec.Pos()
					return nil, fmt.Errorf("%s:%d: %s %s is not a finite number", file, line, name, v.Unit)
				}
				metric := name + " " + v.Unit
				k := mkey{pkg, metric}
				if !declared[k] {
					declared[k] = true
					rn.Metrics = append(rn.Metrics, run.Metric{Name: metric, Unit: v.Unit, Better: goBetter(br.Units(), v.Unit)})
				}
				rn.Samples = append(rn.Samples, run.Sample{Metric: metric, Value: v.Value, Iteration: iter[k]})
				iter[k]++
			}
		}
	}
	if err := br.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", fileName, err)
	}
	if len(runs) == 0 {
		if len(syntaxErrs) > 0 {
			return nil, fmt.Errorf("%w: %s", ErrNotGoBench, syntaxErrs[0])
		}
		return nil, fmt.Errorf("%w: %s has no Benchmark lines", ErrNotGoBench, fileName)
	}
	sort.Strings(order)
	out := make([]*run.Run, 0, len(order))
	for _, pkg := range order {
		rn := runs[pkg]
		// Unit metadata may arrive after the first results; settle it now.
		for i := range rn.Metrics {
			rn.Metrics[i].Better = goBetter(br.Units(), rn.Metrics[i].Unit)
		}
		out = append(out, rn)
	}
	return out, nil
}

// goBenchTool marks runs read from Go benchmark files.
const goBenchTool = "go test -bench"

func newGoRun(fileName, pkg string) *run.Run {
	probe := "go"
	if pkg != "" {
		probe = "go:" + pkg
	}
	base := strings.TrimSuffix(filepath.Base(fileName), filepath.Ext(fileName))
	return &run.Run{
		Schema:   run.Schema,
		ID:       base + "/" + probe,
		Label:    base,
		Suite:    "go",
		Probe:    probe,
		Tool:     goBenchTool,
		Params:   map[string]string{},
		Started:  time.Time{},
		Complete: true,
		Stop:     run.StopFixed,
	}
}

func goBetter(units benchfmt.UnitMetadataMap, unit string) run.Better {
	if units.GetBetter(unit) > 0 {
		return run.Higher
	}
	return run.Lower
}
