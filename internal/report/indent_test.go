package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"testing"
)

// indentOracle is what writeIndented wrote before indentTo: json.Indent's
// output for what json.Marshal writes, and a newline.
func indentOracle(t testing.TB, compact []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		t.Fatalf("%q: %v", compact, err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// writeIndented writes what json.Encoder with SetIndent("", "  ") wrote,
// for values of every JSON shape: empty and nested containers, strings
// with punctuation, escapes and HTML, numbers, null and MarshalJSON.
func TestWriteIndentedAsEncoder(t *testing.T) {
	values := []any{
		nil, 0, "", []int{}, map[string]any{}, []any{[]any{}, map[string]any{}},
		map[string]any{"a": []any{1, "x,y:{z}[]", map[string]any{"b\"c": `\"`}}, "e": nil, "f": true},
		[]num{1, num(math.NaN()), num(math.Inf(-1)), 1e-300},
		struct {
			S string `json:"s"`
			H string `json:"h"`
			U string `json:"u"`
		}{"\\\"", "<a href='x'>&</a>", "\u2028\x1b\u009b"},
	}
	for _, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeIndented(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%#v:\n%s\nwant (json.Encoder):\n%s", v, got.Bytes(), want.Bytes())
		}
	}
}

// Output larger than one write's gathering is written whole, in order.
func TestIndentToManyWrites(t *testing.T) {
	var v []map[string]any
	for i := range 20000 {
		v = append(v, map[string]any{"i": i, "s": "a,b:[c]", "e": []int{}})
	}
	compact, _ := json.Marshal(v)
	var got bytes.Buffer
	w := &countingWriter{w: &got}
	if err := indentTo(w, compact, "  "); err != nil {
		t.Fatal(err)
	}
	if w.writes < 2 {
		t.Fatalf("%d bytes in %d write", got.Len(), w.writes)
	}
	if !bytes.Equal(got.Bytes(), indentOracle(t, compact)) {
		t.Fatal("differs from json.Indent")
	}
}

type countingWriter struct {
	w      *bytes.Buffer
	writes int
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.writes++
	return c.w.Write(b)
}

// FuzzIndentTo holds indentTo to json.Indent on every valid document, as
// json.Marshal would write it (compacted).
func FuzzIndentTo(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":[]},"c\"d,e"]}`, `"x"`, `[[[]],{},{"":""}]`, `{"\\":"\\\\\""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, in); err != nil {
			return
		}
		var got bytes.Buffer
		if err := indentTo(&got, compact.Bytes(), "  "); err != nil {
			t.Fatal(err)
		}
		if want := indentOracle(t, compact.Bytes()); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%q:\n%s\nwant (json.Indent):\n%s", compact.Bytes(), got.Bytes(), want)
		}
	})
}

func BenchmarkIndent(b *testing.B) {
	var v []map[string]any
	for i := range 5000 {
		v = append(v, map[string]any{"host": "node", "i": i, "median": 1.2345678e-3, "labels": []string{"a", "b"}, "empty": []int{}})
	}
	compact, _ := json.Marshal(v)
	b.Run("indentTo", func(b *testing.B) {
		b.SetBytes(int64(len(compact)))
		for b.Loop() {
			indentTo(io.Discard, compact, "  ")
		}
	})
	b.Run("json.Indent", func(b *testing.B) {
		b.SetBytes(int64(len(compact)))
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			json.Indent(&out, compact, "", "  ")
		}
	})
}
