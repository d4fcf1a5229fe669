package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostsCommand: `perflab hosts` prints an inventory selection and an
// ssh_config route without dialling, in text and JSON, and a pattern that
// selects nothing is one line naming the groups, exit 2.
func TestHostsCommand(t *testing.T) {
	inv := filepath.Join("..", "inventory", "testdata", "ini", "hosts")
	code, out, errOut := runCLI(t, "hosts", "--inventory", inv, "web:!canary", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Hosts []struct {
			Name, Connection string
			Hops             []struct{ User, Host string }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range res.Hosts {
		names = append(names, h.Name)
		if h.Connection != "ssh" || len(h.Hops) != 1 {
			t.Errorf("%s: %+v", h.Name, h)
		}
	}
	if got := strings.Join(names, " "); got != "web02.example.com web03.example.com web04.example.com" {
		t.Errorf("web:!canary selected %s", got)
	}

	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("Host far\n  HostName 10.0.0.9\n  ProxyJump mid\nHost mid\n  HostName 10.0.0.8\n  User jump\n  ProxyJump edge:2022\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "hosts", "-F", cfg, "app@far")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "@edge:2022 -> jump@10.0.0.8:22 -> app@10.0.0.9:22") || !strings.Contains(out, "nothing was dialled") {
		t.Errorf("route:\n%s", out)
	}

	code, _, errOut = runCLI(t, "hosts", "--inventory", inv, "nosuch")
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "groups: all") {
		t.Errorf("unknown pattern: exit %d, stderr %q", code, errOut)
	}
}
