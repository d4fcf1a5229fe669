package audit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/perflab/perflab/internal/snapshot"
)

func checkIndented(t *testing.T, doc []byte) {
	t.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc); err != nil {
		return // appendIndented takes the marshaller's output only
	}
	var want bytes.Buffer
	if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	if got := appendIndented(nil, compact.Bytes(), "  "); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("appendIndented(%q) =\n%s\njson.Indent:\n%s", compact.Bytes(), got, want.Bytes())
	}
}

var indentSeeds = []string{
	`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[1,2,{"c":null}]}`, `"x"`, `1`, `[[[]]]`,
	`{"k\"ey":"v\\\\","u":"\u003c\u2028","e":[true,false,-1.5e10]}`, `[{"a":"}],{["}]`,
}

// TestIndentedAsEncodingJSON: the indenter writes what json.Indent writes,
// on the seeds and on a real audit report of every fixture tree's
// snapshot (WriteJSON's own output is the golden files' business).
func TestIndentedAsEncodingJSON(t *testing.T) {
	for _, s := range indentSeeds {
		checkIndented(t, []byte(s))
	}
	w, err := LookupWorkload("general")
	if err != nil {
		t.Fatal(err)
	}
	for name, fs := range roots(t) {
		s, err := snapshot.Collect(fs, snapshot.Options{Sysctls: Sysctls(w)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(NewReport(s, w, Run(s, w), "test", name))
		if err != nil {
			t.Fatal(err)
		}
		checkIndented(t, b)
	}
}

func FuzzIndentedAsEncodingJSON(f *testing.F) {
	for _, s := range indentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkIndented(t, doc) })
}
