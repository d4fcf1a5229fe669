package compare

import (
	"math"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/stats"
)

// suiteMeans summarises each suite by geometric means of median ratios.
// Metrics with a zero or negative median on either side have no ratio and
// are left out of the mean (Metrics counts those included).
func suiteMeans(rows []MetricRow, deltas []Delta) []SuiteMean {
	type acc struct{ raw, oriented []float64 }
	bySuite := map[string]*acc{}
	var order []string
	for _, d := range deltas {
		row := rows[d.Row]
		a, ok := bySuite[row.Suite]
		if !ok {
			a = &acc{}
			bySuite[row.Suite] = a
			order = append(order, row.Suite)
		}
		r := d.Ratio
		if !(r > 0) || math.IsInf(r, 0) {
			continue
		}
		a.raw = append(a.raw, r)
		if row.Better == run.Lower {
			r = 1 / r
		}
		a.oriented = append(a.oriented, r)
	}
	var out []SuiteMean
	for _, s := range order {
		a := bySuite[s]
		sm := SuiteMean{Suite: s, Metrics: len(a.raw), Ratio: math.NaN(), GainPct: math.NaN()}
		if g, ok := stats.GeoMean(a.raw); ok {
			sm.Ratio = g
		}
		if g, ok := stats.GeoMean(a.oriented); ok {
			sm.GainPct = 100 * (g - 1)
		}
		out = append(out, sm)
	}
	return out
}
