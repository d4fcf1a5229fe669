package speedscope

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/flame/folded"
)

func TestConvertRoundTripsStacks(t *testing.T) {
	p, err := folded.Read(strings.NewReader("redis;main;aeMain;readQuery 30\nredis;main;aeMain 10\nredis;main;zero 0\ndd;write;main 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, Convert(p, "test", "nanoseconds", "perflab")); err != nil {
		t.Fatal(err)
	}
	// Decode generically, as speedscope would, and check the schema's
	// required fields and that every sample rebuilds its folded stack.
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["$schema"] != Schema {
		t.Fatalf("$schema = %v", doc["$schema"])
	}
	frames := doc["shared"].(map[string]any)["frames"].([]any)
	prof := doc["profiles"].([]any)[0].(map[string]any)
	for _, k := range []string{"type", "name", "unit", "startValue", "endValue", "samples", "weights"} {
		if _, ok := prof[k]; !ok {
			t.Fatalf("profile lacks %q", k)
		}
	}
	if prof["type"] != "sampled" || prof["endValue"].(float64) != 45 {
		t.Fatalf("profile = %v", prof)
	}
	samples, weights := prof["samples"].([]any), prof["weights"].([]any)
	if len(samples) != 3 || len(weights) != 3 {
		t.Fatalf("zero-weight stack should be dropped: %d samples", len(samples))
	}
	got := map[string]float64{}
	for i, s := range samples {
		var names []string
		for _, ix := range s.([]any) {
			names = append(names, frames[int(ix.(float64))].(map[string]any)["name"].(string))
		}
		got[strings.Join(names, ";")] = weights[i].(float64)
	}
	if got["redis;main;aeMain;readQuery"] != 30 || got["redis;main;aeMain"] != 10 || got["dd;write;main"] != 5 {
		t.Fatalf("samples = %v", got)
	}
	if len(frames) != 6 { // redis main aeMain readQuery dd write (main shared)
		t.Fatalf("frames not deduplicated: %v", frames)
	}
}
