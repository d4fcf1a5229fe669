package report

import (
	"fmt"
	"math"
	"strings"
)

// Value formats a measurement with its unit, scaling time and byte-rate
// units to a readable prefix (benchfmt tidies ns/op to sec/op, so
// 0.0000102 sec/op prints as "10.2µs/op").
func Value(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	if math.IsInf(v, 0) {
		return "∞"
	}
	switch {
	case unit == "sec/op" || unit == "s":
		suffix := strings.TrimPrefix(unit, "sec")
		if unit == "s" {
			suffix = ""
		}
		return scaleTime(v) + suffix
	case unit == "B/s":
		return scaleSI(v, 1000, []string{"B/s", "kB/s", "MB/s", "GB/s", "TB/s"})
	}
	return Num(v) + " " + unit
}

func scaleTime(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0s"
	case a < 1e-6:
		return Num(v*1e9) + "ns"
	case a < 1e-3:
		return Num(v*1e6) + "µs"
	case a < 1:
		return Num(v*1e3) + "ms"
	}
	return Num(v) + "s"
}

func scaleSI(v, base float64, names []string) string {
	i := 0
	for math.Abs(v) >= base && i < len(names)-1 {
		v /= base
		i++
	}
	return Num(v) + " " + names[i]
}

// Num prints about four significant digits without exponents for the
// magnitudes benchmarks produce, with k/M/G beyond a million.
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 1e9:
		return trim(fmt.Sprintf("%.3f", v/1e9)) + "G"
	case a >= 1e6:
		return trim(fmt.Sprintf("%.3f", v/1e6)) + "M"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return trim(fmt.Sprintf("%.1f", v))
	case a >= 10:
		return trim(fmt.Sprintf("%.2f", v))
	case a >= 1:
		return trim(fmt.Sprintf("%.3f", v))
	case a == 0:
		return "0"
	case a >= 0.001:
		return trim(fmt.Sprintf("%.4f", v))
	}
	return fmt.Sprintf("%.3g", v)
}

func trim(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// Pct formats a signed percentage: "+3.2%", "−0.8%".
func Pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := fmt.Sprintf("%+.1f%%", v)
	if math.Abs(v) < 0.1 && v != 0 {
		s = fmt.Sprintf("%+.2f%%", v)
	}
	return strings.Replace(s, "-", "−", 1)
}

// PValue formats p as benchstat does (three decimals), with "<0.001".
func PValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
