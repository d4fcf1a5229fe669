package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/golden"
	"github.com/perflab/perflab/internal/trace"
)

// The trace reports are read from the JSON internal/trace's tests keep
// (testdata/trace/*.json) and rendered in every format they have.
func TestTraceGolden(t *testing.T) {
	read := func(name string, v any) {
		data, err := os.ReadFile(filepath.Join("testdata/trace", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatal(err)
		}
	}
	var rt trace.RetransReport
	read("retrans", &rt)
	var ct trace.CacheReport
	read("cachestat", &ct)
	for name, res := range map[string]any{
		"retrans":   &Retrans{RetransReport: &rt, Events: 10},
		"cachestat": &Cache{CacheReport: &ct},
	} {
		for _, f := range Formats(res) {
			var b bytes.Buffer
			if err := Write(&b, res, f, Options{}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata/golden/trace", name+"."+f+".golden"), b.Bytes())
		}
	}
}
