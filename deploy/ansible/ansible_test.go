// Package ansible_test runs deploy/ansible's playbook for real with
// Debian's ansible-core: against two inventory hosts on the local
// connection, and over SSH against two hosts of the namespace test lab
// (internal/testlab), whose imported runs then compare.
package ansible_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/testlab"
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

// TestPlaybook runs the playbook on the local connection against two
// inventory hosts on this machine (or, with PERFLAB_ANSIBLE_INVENTORY and
// PERFLAB_ANSIBLE_HOSTS, against any inventory).
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
	playAndImport(t, bin, dir, inv, hosts, func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, playbook, args...)
		cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCALHOST_WARNING=false")
		return cmd
	})
}

// TestPlaybookSSH runs the same playbook over SSH (OpenSSH, host keys
// checked) against two hosts of the namespace test lab, from the lab's
// controller namespace; the imported runs of the two hosts compare.
func TestPlaybookSSH(t *testing.T) {
	testenv.Short(t)
	playbook := testenv.RequireTool(t, "ansible-playbook")
	testenv.RequireTool(t, "ssh")
	l := testlab.Start(t, testlab.Options{Prefix: "ansible", Hosts: []testlab.HostSpec{{Name: "lab1"}, {Name: "lab2"}}})
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	bin := perflabBinary(t)
	dir := t.TempDir()
	hosts := []string{"lab1", "lab2"}
	// The lab hosts share this machine's filesystem: each gets its own
	// perflab directory, as two machines would have. OpenSSH finds
	// ~/.ssh through the password database, not $HOME, so the lab's
	// known_hosts and key are named explicitly.
	ini := "[lab]\n"
	for _, h := range hosts {
		ini += fmt.Sprintf("%s ansible_host=%s perflab_remote_dir=%s\n", h, l.Host(h).Addr, filepath.Join(dir, "remote", h))
	}
	ini += fmt.Sprintf("\n[lab:vars]\nansible_user=root\nansible_ssh_private_key_file=%s\n"+
		"ansible_ssh_common_args='-o UserKnownHostsFile=%s -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes'\n", l.Key, l.KnownHosts())
	inv := filepath.Join(dir, "lab.ini")
	if err := os.WriteFile(inv, []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	db := playAndImport(t, bin, dir, inv, hosts, func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := l.Cmd(ctx, playbook, args...)
		cmd.Env = append(cmd.Env, "ANSIBLE_NOCOLOR=1")
		return cmd
	})
	// The two hosts' imported runs compare cleanly.
	list, err := exec.Command(bin, "runs", "list", "--db", db, "--format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var runs []struct {
		ID   string `json:"id"`
		Host string `json:"host"`
	}
	if err := json.Unmarshal(list, &runs); err != nil || len(runs) != 2 || runs[0].Host == runs[1].Host {
		t.Fatalf("imported runs %v (%v), want one from each lab host", runs, err)
	}
	for _, r := range runs {
		if r.Host != "lab1" && r.Host != "lab2" {
			t.Errorf("run %s is attributed to %q, want the lab host's own hostname", r.ID, r.Host)
		}
	}
	out, err := exec.Command(bin, "compare", runs[0].ID, runs[1].ID, "--db", db, "--format", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("compare %s %s: %v\n%s", runs[0].ID, runs[1].ID, err, out)
	}
	var cmp map[string]any
	if err := json.Unmarshal(out, &cmp); err != nil || !strings.Contains(string(out), "syscall") {
		t.Errorf("compare output is not a comparison of the syscall runs (%v): %.500s", err, out)
	}
}

// playAndImport runs the playbook (through command), checks each host's
// fetched check report, imports the runs with the README's line into a
// new store, checks one syscall run per host and that the fleet report
// reads them, and returns the store.
func playAndImport(t *testing.T, bin, dir, inv string, hosts []string, command func(ctx context.Context, args ...string) *exec.Cmd) string {
	t.Helper()
	results := filepath.Join(dir, "results")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := command(ctx, "-i", inv, "perflab.yml",
		"-e", "perflab_binary="+bin, "-e", "perflab_fetch_dir="+results,
		// A short check: the audit and one 3-second probe.
		"-e", "perflab_command=\"check --format json -o '' --suite syscall --budget 3s --db {{ perflab_remote_db }}\"")
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
	return db
}
