package cpuset

import (
	"reflect"
	"testing"
)

func TestListRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		out  string
	}{
		{"0-3,8", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"5", []int{5}, "5"},
		{"", nil, ""},
		{"2,0-1,1", []int{0, 1, 2}, "0-2"},
		{"64-71\n", []int{64, 65, 66, 67, 68, 69, 70, 71}, "64-71"},
	} {
		got, err := ParseList(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if s := FormatList(got); s != tc.out {
			t.Errorf("FormatList(%v) = %q, want %q", got, s, tc.out)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-x"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q) accepted bad input", bad)
		}
	}
}

func TestMask(t *testing.T) {
	// The mask seed 002 wrote to xps_cpus on a 256-CPU Kunpeng: CPU 70.
	seed := "00000000,00000000,00000000,00000000,00000000,00000040,00000000,00000000"
	got, err := ParseMask(seed)
	if err != nil || !reflect.DeepEqual(got, []int{70}) {
		t.Fatalf("ParseMask(seed) = %v, %v", got, err)
	}
	if s := FormatMask([]int{70}, 256); s != seed {
		t.Errorf("FormatMask = %q, want %q", s, seed)
	}
	if s := FormatMask([]int{0, 1}, 2); s != "00000003" {
		t.Errorf("FormatMask([0 1],2) = %q", s)
	}
	if !MaskEmpty("00000000,00000000") || MaskEmpty("1") {
		t.Error("MaskEmpty wrong")
	}
	if _, err := ParseMask("zz"); err == nil {
		t.Error("ParseMask accepted zz")
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0-3,8", "", "1-", "7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseList(s)
		if err != nil {
			return
		}
		again, err := ParseList(FormatList(c))
		if err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("round trip of %q: %v -> %v (%v)", s, c, again, err)
		}
	})
}
