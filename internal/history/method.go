package history

import (
	"github.com/perflab/perflab/internal/changepoint"
)

// Method states how the change points were found, for the reader.
type Method struct {
	Name         string  `json:"name"`
	MinSegment   int     `json:"min_segment"`
	Alpha        float64 `json:"alpha"`
	Permutations int     `json:"permutations"`
}

// MethodOf describes o (with its defaults filled in).
func MethodOf(o changepoint.Options) Method {
	m := Method{Name: "e-divisive means, permutation test", MinSegment: o.MinSegment, Alpha: o.Alpha, Permutations: o.Permutations}
	if m.MinSegment < 2 {
		m.MinSegment = changepoint.DefaultMinSegment
	}
	if m.Alpha <= 0 || m.Alpha >= 1 {
		m.Alpha = changepoint.DefaultAlpha
	}
	if m.Permutations <= 0 {
		m.Permutations = changepoint.DefaultPermutations
	}
	return m
}
