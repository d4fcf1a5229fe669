package tools

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

func TestParseLevels(t *testing.T) {
	for in, want := range map[string][]int{
		"1,20,100":      {1, 20, 100},
		"100, 1,20,20":  {1, 20, 100},
		"1-128":         {1, 2, 4, 8, 16, 32, 64, 128},
		"1-100":         {1, 2, 4, 8, 16, 32, 64, 100},
		"20-100/20":     {20, 40, 60, 80, 100},
		"10-25/10":      {10, 20, 25},
		"5":             {5},
		"1,50-60/5,200": {1, 50, 55, 60, 200},
	} {
		got, err := ParseLevels(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "a", "100-1", "1-10/0", "1-10/x", "1-100000/1", "200000", "1,,2"} {
		if got, err := ParseLevels(bad); err == nil {
			t.Errorf("%q accepted: %v", bad, got)
		}
	}
}

func FuzzParseLevels(f *testing.F) {
	for _, s := range []string{"1,20,100", "1-128", "20-100/20", "7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLevels(s)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > 200 {
			t.Fatalf("%q: %d levels", s, len(got))
		}
		for i, l := range got {
			if l < 1 || l > maxLevel || i > 0 && l <= got[i-1] {
				t.Fatalf("%q: %v not ascending within range", s, got)
			}
		}
	})
}

func TestSweepMetricsAndIterate(t *testing.T) {
	ms := sweepMetrics([]run.Metric{{Name: "tps", Unit: "tx/s", Better: run.Higher}}, []int{1, 20}, "connections")
	if len(ms) != 2 || ms[1].Name != "tps.c20" || ms[1].Series != "tps" || ms[1].X != 20 || ms[1].XUnit != "connections" || ms[1].Better != run.Higher {
		t.Errorf("metrics %+v", ms)
	}
	var seen []int
	cur := 0
	v, err := sweepIterate(context.Background(), []int{1, 20}, func(l int) { cur = l }, func(context.Context) (map[string]float64, error) {
		seen = append(seen, cur)
		return map[string]float64{"tps": float64(cur * 10)}, nil
	})
	if err != nil || v["tps.c1"] != 10 || v["tps.c20"] != 200 || len(v) != 2 || !reflect.DeepEqual(seen, []int{1, 20}) {
		t.Errorf("%v %v %v", v, err, seen)
	}
	_, err = sweepIterate(context.Background(), []int{1, 20}, func(l int) { cur = l }, func(context.Context) (map[string]float64, error) {
		if cur == 20 {
			return nil, errors.New("boom")
		}
		return map[string]float64{"tps": 1}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "concurrency 20") {
		t.Errorf("error %v does not name the level", err)
	}
}
