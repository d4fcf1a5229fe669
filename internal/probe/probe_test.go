package probe

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/clierr"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "64KiB": 64 << 10, "512MiB": 512 << 20, "1G": 1 << 30, " 2K ": 2048, "10B": 10, "1TiB": 1 << 40, "2T": 2 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1.5G", "KiB", "17179869185G", "9223372036854775807K"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestValidatedParams(t *testing.T) {
	p := Params{"threads": "4,1,2", "n": "7", "d": "300ms", "bad": "x", "dup": "1,1"}
	if v, err := p.IntsIn("cpu", "threads", nil, 1, 64); err != nil || !reflect.DeepEqual(v, []int{1, 2, 4}) {
		t.Errorf("IntsIn = %v, %v", v, err)
	}
	if v, err := p.IntIn("cpu", "n", 1, 1, 10); err != nil || v != 7 {
		t.Errorf("IntIn = %v, %v", v, err)
	}
	if v, err := p.IntIn("cpu", "missing", 3, 1, 10); err != nil || v != 3 {
		t.Errorf("IntIn default = %v, %v", v, err)
	}
	if v, err := p.DurationIn("cpu", "d", time.Second, time.Millisecond, time.Minute); err != nil || v != 300*time.Millisecond {
		t.Errorf("DurationIn = %v, %v", v, err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := p.IntIn("cpu", "n", 1, 1, 5); return err }(), "7 is out of range [1, 5]"},
		{func() error { _, err := p.IntIn("cpu", "bad", 1, 1, 5); return err }(), `"x" is not an integer`},
		{func() error { _, err := p.IntsIn("cpu", "dup", nil, 1, 5); return err }(), "1 is listed twice"},
		{func() error { _, err := p.DurationIn("cpu", "bad", 0, 0, time.Second); return err }(), "not a duration"},
		{CheckKnown("cpu", Params{"thraeds": "1"}, Params{"threads": "1", "max_prime": "10000"}), "unknown (known: max_prime, threads)"},
	} {
		var ce *clierr.Error
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || !errors.As(tc.err, &ce) || ce.Code != clierr.Usage {
			t.Errorf("error %v; want a usage error containing %q", tc.err, tc.want)
		}
	}
}
