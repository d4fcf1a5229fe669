package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
)

func TestCheckAndWrite(t *testing.T) {
	root := t.TempDir()
	if code := run(root, true); code != 1 {
		t.Errorf("-check with no docs: exit %d, want 1", code)
	}
	if code := run(root, false); code != 0 {
		t.Fatalf("write: exit %d", code)
	}
	if code := run(root, true); code != 0 {
		t.Errorf("-check right after writing: exit %d, want 0", code)
	}
	p := filepath.Join(root, "docs", "rules.md")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range audit.Rules() {
		if !strings.Contains(string(data), "\n### "+r.ID+"\n") {
			t.Errorf("rules.md has no section for %s", r.ID)
		}
	}
	os.WriteFile(p, append(data, "hand edit\n"...), 0o644)
	if code := run(root, true); code != 1 {
		t.Errorf("-check after a hand edit: exit %d, want 1", code)
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	a, err := renderRules()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		b, _ := renderRules()
		if string(a) != string(b) {
			t.Fatal("renderRules output differs between runs (map order?)")
		}
	}
}
