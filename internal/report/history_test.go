package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/golden"
)

func init() { time.Local = time.UTC } // the history's text shows local time

// loadHistory reads testdata/history/series.json: the 'runs history
// --format json' of internal/history's step fixture (24 runs of cpu on
// h1, 10% slower from run 12 on when vm.swappiness went 60 → 10).
func loadHistory(t *testing.T) *History {
	t.Helper()
	data, err := os.ReadFile("testdata/history/series.json")
	if err != nil {
		t.Fatal(err)
	}
	var h History
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Series) == 0 || len(h.Series[0].Changes) == 0 {
		t.Fatalf("fixture has no series with a change point: %+v", h)
	}
	return &h
}

func TestHistoryGolden(t *testing.T) {
	h := loadHistory(t)
	for _, f := range []string{FormatText, FormatMD, FormatJSON} {
		var b bytes.Buffer
		if err := Write(&b, h, f, Options{}); err != nil {
			t.Fatal(err)
		}
		ext := map[string]string{FormatText: "txt"}[f]
		if ext == "" {
			ext = f
		}
		golden.Check(t, filepath.Join("testdata/golden/history", "history."+ext+".golden"), b.Bytes())
	}
	// The change names the setting and says worse (higher is better).
	var b bytes.Buffer
	_ = Write(&b, h, FormatText, Options{})
	if !strings.Contains(b.String(), "vm.swappiness: 60 → 10") || !strings.Contains(b.String(), "(worse)") {
		t.Errorf("history text lacks the setting or the verdict:\n%s", b.String())
	}
	if err := Write(&b, h, FormatHTML, Options{}); err == nil {
		t.Error("a history has no HTML renderer, Write should say so")
	}
}

func TestSparkline(t *testing.T) {
	if got := Sparkline([]float64{1, 2, 3, 4, 5, 6, 7, 8}, []int{4}); got != "▁▂▃▄|▅▆▇█" {
		t.Errorf("sparkline %q", got)
	}
	if got := Sparkline([]float64{5, 5, 5}, nil); got != "▁▁▁" || strings.Contains(Sparkline(nil, nil), "|") {
		t.Errorf("flat sparkline %q", got)
	}
}
