package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportedLabelCannotDriveTheTerminal: a label carrying escape
// sequences (set the window title, clear the screen) is printed visibly by
// 'runs list', not interpreted.
func TestImportedLabelCannotDriveTheTerminal(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "serve", "testdata", "real-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc["runs"].([]any) {
		r.(map[string]any)["label"] = "evil\x1b]0;pwned\x07\x1b[2J"
	}
	b, _ = json.Marshal(doc)
	dir := t.TempDir()
	export, db := filepath.Join(dir, "x.json"), filepath.Join(dir, "p.db")
	os.WriteFile(export, b, 0o644)
	if code, _, errs := runCLI(t, "runs", "import", "--db", db, export); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	code, out, errs := runCLI(t, "runs", "list", "--db", db)
	if code != 0 {
		t.Fatalf("runs list: %d %s", code, errs)
	}
	if strings.Contains(out, "\x1b]") || strings.Contains(out, "\x07") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("runs list passed escape sequences through: %q", out)
	}
	if !strings.Contains(out, "^[]0;pwned^G") {
		t.Errorf("runs list does not show the label's escapes visibly: %q", out)
	}
}
