// Package ansible_test runs deploy/ansible's playbook for real with
// Debian's ansible-core: against two inventory hosts on the local
// connection now; the same test runs against the SSH test lab by pointing
// PERFLAB_ANSIBLE_INVENTORY at the lab's inventory (see README.md).
package ansible_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// perflabBinary builds perflab as the operator would ship it (static), or
// uses PERFLAB_BINARY.
func perflabBinary(t *testing.T) string {
	if p := os.Getenv("PERFLAB_BINARY"); p != "" {
		return p
	}
	bin := filepath.Join(t.TempDir(), "perflab")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/perflab/perflab/cmd/perflab")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestPlaybook(t *testing.T) {
	testenv.Short(t)
	playbook := testenv.RequireTool(t, "ansible-playbook")
	bin := perflabBinary(t)
	dir := t.TempDir()
	inv := os.Getenv("PERFLAB_ANSIBLE_INVENTORY")
	hosts := []string{"node-a", "node-b"}
	if inv == "" {
		// Two inventory hosts on this machine, each with its own
		// directory, as two machines would have.
		inv = filepath.Join(dir, "hosts.ini")
		ini := "[lab]\n"
		for _, h := range hosts {
			ini += h + " ansible_connection=local perflab_remote_dir=" + filepath.Join(dir, "remote", h) + "\n"
		}
		if err := os.WriteFile(inv, []byte(ini), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		hosts = strings.Fields(os.Getenv("PERFLAB_ANSIBLE_HOSTS"))
	}
	results := filepath.Join(dir, "results")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, playbook, "-i", inv, "perflab.yml",
		"-e", "perflab_binary="+bin, "-e", "perflab_fetch_dir="+results,
		// A short check: the audit and one 3-second probe.
		"-e", "perflab_command=\"check --format json -o '' --suite syscall --budget 3s --db {{ perflab_remote_db }}\"")
	cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCALHOST_WARNING=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, out)
	}

	var exports []string
	for _, h := range hosts {
		data, err := os.ReadFile(filepath.Join(results, h, "check.json"))
		if err != nil {
			t.Fatalf("%s: check result not fetched: %v\n%s", h, err, out)
		}
		var check struct {
			Kind  string          `json:"kind"`
			Audit json.RawMessage `json:"audit"`
		}
		if err := json.Unmarshal(data, &check); err != nil || check.Kind != "perflab-check" || len(check.Audit) == 0 {
			t.Fatalf("%s: check.json is not a check report (%v): %.300s", h, err, data)
		}
		exports = append(exports, filepath.Join(results, h, "runs.json"))
	}

	// The README's import line, then the runs as stored.
	db := filepath.Join(dir, "fleet.db")
	imp := exec.Command(bin, append([]string{"runs", "import", "--db", db}, exports...)...)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("runs import: %v\n%s", err, out)
	}
	list, err := exec.Command(bin, "runs", "list", "--db", db, "--format", "json").Output()
	if err != nil {
		t.Fatalf("runs list: %v", err)
	}
	var runs []struct {
		ID    string `json:"id"`
		Probe string `json:"probe"`
	}
	if err := json.Unmarshal(list, &runs); err != nil {
		t.Fatalf("runs list json: %v\n%s", err, list)
	}
	if len(runs) != len(hosts) {
		t.Fatalf("%d runs imported, want one syscall run per host (%d): %s", len(runs), len(hosts), list)
	}
	for _, r := range runs {
		if r.Probe != "syscall" {
			t.Errorf("imported run %s is %s, want syscall", r.ID, r.Probe)
		}
	}
	// And the fleet reads them together.
	if out, err := exec.Command(bin, "fleet", "report", "--db", db).CombinedOutput(); err != nil || !strings.Contains(string(out), "syscall") {
		t.Errorf("fleet report on the imported runs: %v\n%s", err, out)
	}
}
