package tools

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fixture reads testdata/<tool>/<name>.
func fixture(t testing.TB, tool, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", tool, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seedFixtures adds every file of testdata/<tool> to a fuzz corpus.
func seedFixtures(f *testing.F, tool string) {
	ents, err := os.ReadDir(filepath.Join("testdata", tool))
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range ents {
		f.Add(fixture(f, tool, e.Name()))
	}
}

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

func wantNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
