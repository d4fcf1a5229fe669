package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
)

func TestResolvesEveryKind(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "probes.yaml")
	os.WriteFile(file, []byte("probes:\n  api:\n    http: http://127.0.0.1:1/x\n    connections: 4\n  tps:\n    exec: /bin/true\n"), 0o644)
	c, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cpu", "sysbench.cpu", "api", "tps", "exec:sleep 0.01", "http://127.0.0.1:8080/", "https://example.test/"} {
		p, err := c.Lookup(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Name() != name {
			t.Errorf("%s resolved to %s", name, p.Name())
		}
	}
	plan, err := c.Resolve([]string{"api", "exec:sleep 0.01"}, []string{"connections=8"})
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Items[0].Params["connections"]; got != "8" {
		t.Errorf("--param connections=8 on api: got %q", got)
	}
	if _, err := c.Lookup("nosuch"); clierr.Code(err) != clierr.Usage {
		t.Errorf("unknown probe: %v (code %d), want a usage error", err, clierr.Code(err))
	}
}

func TestFileMistakesAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"clash":   "probes:\n  cpu:\n    exec: /bin/true\n",
		"unknown": "probes:\n  api:\n    http: http://127.0.0.1/\n    conections: 3\n",
	} {
		f := filepath.Join(dir, name+".yaml")
		os.WriteFile(f, []byte(body), 0o644)
		_, err := Open(f)
		if clierr.Code(err) != clierr.Usage || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: %v, want a usage error naming the file", name, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing.yaml")); clierr.Code(err) != clierr.Usage {
		t.Errorf("missing --probes file: %v", err)
	}
}

func TestNoDefaultFileIsFine(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := Open(""); err != nil {
		t.Fatal(err)
	}
}
