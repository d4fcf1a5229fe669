// Package numfmt is perflab's one number formatter: every report, summary
// and finding prints measured values, byte sizes, percentages and p-values
// through it, so the same quantity reads the same everywhere.
//
// The choice of unit prefix (k, M, µ, Ki, Gi, …) is golang.org/x/perf's
// benchunit, the scaling benchstat prints with; numfmt adds what benchunit
// leaves to its caller: the unit itself, trailing-zero trimming, and the
// special forms for NaN, infinity, signed percentages and p-values.
package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
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
	switch unit {
	case "sec/op":
		return seconds(v) + "/op"
	case "s":
		return seconds(v)
	case "B/s":
		num, prefix := scaled(v, benchunit.Decimal, 1)
		return num + " " + prefix + "B/s"
	}
	return Num(v) + " " + unit
}

// seconds prints a duration in s, ms, µs or ns.
func seconds(v float64) string {
	if v == 0 {
		return "0s"
	}
	if math.Abs(v) >= 1 {
		return Num(v) + "s"
	}
	num, prefix := scaled(v, benchunit.Decimal, 0)
	return num + prefix + "s"
}

// scaled divides v by the prefix benchunit picks for it (none when that
// would be below min) and returns the digits as Num prints them and the
// prefix.
func scaled(v float64, cls benchunit.Class, min float64) (string, string) {
	sc := benchunit.CommonScale([]float64{v}, cls)
	if sc.Factor < min {
		sc = benchunit.Scaler{Factor: 1}
	}
	return Num(v / sc.Factor), sc.Prefix
}

// Num prints about four significant digits without exponents for the
// magnitudes benchmarks produce, with k/M/G (benchunit's prefixes) from a
// million on.
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 1e6:
		sc := benchunit.CommonScale([]float64{v}, benchunit.Decimal)
		return trim(fmt.Sprintf("%.3f", v/sc.Factor)) + sc.Prefix
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

// Bytes formats a byte count with a binary prefix and one decimal
// ("1.5 KiB", "16.0 GiB"), or exactly below 1 KiB ("512 B").
func Bytes(b int64) string {
	f := float64(b)
	if math.Abs(f) < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	sc := benchunit.CommonScale([]float64{f}, benchunit.Binary)
	return fmt.Sprintf("%.1f %sB", f/sc.Factor, sc.Prefix)
}

// KiB formats a count of KiB (as /proc/meminfo gives them) like Bytes.
func KiB(v int64) string { return Bytes(v * 1024) }

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

// Fixed prints v with at most dec decimals, trailing zeros trimmed.
func Fixed(v float64, dec int) string {
	return trim(fmt.Sprintf("%.*f", dec, v))
}

// PlusMinus prints "median ± half" with both rounded to the half-width's
// second significant digit, so the digits shown are the ones the
// measurement supports; "median ± 0" prints the median in full.
func PlusMinus(median, half float64) string {
	if half == 0 {
		return strconv.FormatFloat(median, 'f', -1, 64) + " ± 0"
	}
	dec := min(max(1-int(math.Floor(math.Log10(half))), 0), 9)
	return strconv.FormatFloat(median, 'f', dec, 64) + " ± " + strconv.FormatFloat(half, 'f', dec, 64)
}

// Sig prints x with n significant digits, without an exponent for the
// magnitudes benchmarks produce.
func Sig(x float64, n int) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	dec := min(max(n-1-int(math.Floor(math.Log10(math.Abs(x)))), 0), 9)
	return strconv.FormatFloat(x, 'f', dec, 64)
}
