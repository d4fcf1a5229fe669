package fleetrun_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLocalConnection: an inventory host with ansible_connection=local is
// run on this machine through the same agent a remote host gets (its
// snapshot stored, nothing dialled, nothing left in $TMPDIR); a host with
// a connection plugin perflab cannot use, and one that needs become as a
// non-root user, fail with one line saying why, without dialling.
func TestLocalConnection(t *testing.T) {
	bin := buildPerflab(t)
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts")
	body := "[all]\nhere ansible_connection=local\ncontainer1 ansible_connection=docker\nsudoer ansible_host=192.0.2.1 ansible_user=ops ansible_become=true\n"
	if err := os.WriteFile(inv, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "fleet.db")
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "snapshot", "--inventory", inv, "--on", "all", "--format", "json", "--db", db)
	c.Env = append(os.Environ(), "TMPDIR="+tmp, "NO_COLOR=1")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 0 {
		t.Errorf("exit 0 with two hosts refused, want non-zero\n%s", stderr.String())
	}
	var rep struct {
		MaxOpenSessions int `json:"max_open_sessions"`
		Hosts           []struct {
			Host, Address, Status, Reason string
			Stored                        []string
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("json: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if rep.MaxOpenSessions != 0 {
		t.Errorf("%d SSH connections opened, want none", rep.MaxOpenSessions)
	}
	for _, h := range rep.Hosts {
		switch h.Host {
		case "here":
			if h.Status != "ok" || h.Address != "local" || len(h.Stored) != 1 {
				t.Errorf("here: %+v, want ok, local, one snapshot stored\n%s", h, stderr.String())
			}
		case "container1":
			if h.Status != "failed" || !strings.Contains(h.Reason, "ansible_connection=docker") {
				t.Errorf("container1: %+v, want failed naming the connection", h)
			}
		case "sudoer":
			if h.Status != "failed" || !strings.Contains(h.Reason, "ansible_become") {
				t.Errorf("sudoer: %+v, want failed naming ansible_become", h)
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "perflab-remote.*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
