package numfmt

import (
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Value(0.0000102, "sec/op"), "10.2µs/op"},
		{Value(0.25, "s"), "250ms"},
		{Value(3.5e-9, "s"), "3.5ns"},
		{Value(12.5, "s"), "12.5s"},
		{Value(0, "s"), "0s"},
		{Value(1.25e9, "B/s"), "1.25 GB/s"},
		{Value(500, "B/s"), "500 B/s"},
		{Value(1234.4, "ops/s"), "1234 ops/s"},
		{Value(math.NaN(), "ns"), "–"},
		{Value(math.Inf(1), "ns"), "∞"},
		{Num(2.5e6), "2.5M"},
		{Num(3e9), "3G"},
		{Num(0.00012), "0.00012"},
		{Num(0.5), "0.5"},
		{Bytes(512), "512 B"},
		{Bytes(1536), "1.5 KiB"},
		{Bytes(16 << 30), "16.0 GiB"},
		{Bytes(1200 << 30), "1.2 TiB"},
		{KiB(8 << 20), "8.0 GiB"},
		{Pct(3.24), "+3.2%"},
		{Pct(-0.05), "−0.05%"},
		{PValue(0.0004), "<0.001"},
		{PValue(0.0123), "0.012"},
		{PlusMinus(1234.5678, 12.3), "1235 ± 12"},
		{PlusMinus(0.0123, 0.00042), "0.01230 ± 0.00042"},
		{PlusMinus(7.25, 0), "7.25 ± 0"},
		{Sig(1234.5678, 4), "1235"},
		{Sig(0.00123456, 3), "0.00123"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
