package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/run"
)

// realDocs are the stored run documents of the console's real runs
// (../serve/testdata/real-runs.json) as schema 7 wrote them (monitor
// series inline) and as schema 8 writes them (series apart).
func realDocs(b testing.TB) (whole, lean, series []string) {
	body, err := os.ReadFile(filepath.Join("..", "serve", "testdata", "real-runs.json"))
	if err != nil {
		b.Fatal(err)
	}
	var ex run.Export
	if err := json.Unmarshal(body, &ex); err != nil {
		b.Fatal(err)
	}
	for _, r := range ex.Runs {
		doc := *r
		doc.Samples = nil
		w, err := json.Marshal(&doc)
		if err != nil {
			b.Fatal(err)
		}
		d, s, err := encodeRunDoc(r, true)
		if err != nil {
			b.Fatal(err)
		}
		whole, lean, series = append(whole, string(w)), append(lean, d), append(series, s)
	}
	return whole, lean, series
}

// BenchmarkDecodeRunDoc weighs the levers for the index build and the
// comparison's history (docs/performance.md, "Monitor series apart"):
// decoding a whole schema 7 document, the same skipping its series
// (withoutSeries: the cheaper lever; encoding/json still scans the
// series' bytes twice but parses no number of them), and a
// schema 8 document (series stored apart); per document.
func BenchmarkDecodeRunDoc(b *testing.B) {
	whole, lean, _ := realDocs(b)
	bytes := func(docs []string) (n int64) {
		for _, d := range docs {
			n += int64(len(d))
		}
		return n / int64(len(docs))
	}
	b.Run("schema7-whole", func(b *testing.B) {
		b.SetBytes(bytes(whole))
		for i := 0; b.Loop(); i++ {
			if _, err := decodeRun("x", whole[i%len(whole)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("schema7-skip-monitor", func(b *testing.B) {
		b.SetBytes(bytes(whole))
		for i := 0; b.Loop(); i++ {
			var r run.Run
			if err := json.Unmarshal([]byte(whole[i%len(whole)]), &withoutSeries{Run: &r}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a comparison's noise history decodes of each of its runs
	// (decodeHistoryRun: a few fields), of either document.
	for _, h := range []struct {
		name string
		docs []string
	}{{"history-schema7", whole}, {"history-schema8", lean}} {
		b.Run(h.name, func(b *testing.B) {
			b.SetBytes(bytes(h.docs))
			for i := 0; b.Loop(); i++ {
				if _, err := decodeHistoryRun("x", h.docs[i%len(h.docs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("schema8-doc", func(b *testing.B) {
		b.SetBytes(bytes(lean))
		for i := 0; b.Loop(); i++ {
			if _, err := decodeRun("x", lean[i%len(lean)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
