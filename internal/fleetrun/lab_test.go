package fleetrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/internal/testlab"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// buildPerflab builds perflab once for the package's tests (removed by
// TestMain).
func buildPerflab(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "fleetrun-test."); buildErr != nil {
			return
		}
		c := exec.Command("go", "build", "-o", filepath.Join(buildDir, "perflab"), "github.com/perflab/perflab/cmd/perflab")
		c.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := c.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "perflab")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func perflab(t *testing.T, l *testlab.Lab, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := l.Cmd(ctx, bin, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("perflab %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

type fleetJSON struct {
	Forks           int `json:"forks"`
	MaxOpenSessions int `json:"max_open_sessions"`
	Hosts           []struct {
		Host   string             `json:"host"`
		Status string             `json:"status"`
		Reason string             `json:"reason"`
		Stored []string           `json:"stored"`
		Output json.RawMessage    `json:"output"`
		Phases map[string]float64 `json:"phases"`
	} `json:"hosts"`
}

// The fleet lab: five hosts (h3 under a CPU quota, h4 with other
// sysctls; the issue asks for four, a fifth steadies the robust spread on
// a busy 2-core machine), an address in the lab subnet with no host, and a
// host whose key changed after it was trusted. audit across all of them
// reports each host's outcome and stores the five snapshots with --forks 2
// never exceeded; bench across the five (all at once, so a
// change in the machine's other load falls on every host alike) then gives a fleet report naming h3 the cpu
// outlier by its quota and h4's sysctls.
func TestFleetLab(t *testing.T) {
	testenv.Short(t)
	l := testlab.Start(t, testlab.Options{Prefix: "fleetrun", OwnHome: true, Hosts: []testlab.HostSpec{
		{Name: "h1"}, {Name: "h2"},
		{Name: "h3", CPUQuota: 0.05},
		{Name: "h4", Sysctls: map[string]string{"net.core.somaxconn": "256", "net.ipv4.tcp_rmem": "4096 16384 65536"}},
		{Name: "h5"},
		{Name: "rekeyed"},
	}})
	bin := buildPerflab(t)
	var kh strings.Builder
	for _, h := range l.Hosts {
		key := h.HostKey
		if h.Name == "rekeyed" {
			key = l.Host("h1").HostKey // its address now presents another key than the one trusted
		}
		fmt.Fprintf(&kh, "%s %s\n", h.Addr, key)
	}
	if err := os.WriteFile(l.KnownHosts(), []byte(kh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var ini strings.Builder
	ini.WriteString("[lab]\n")
	for _, n := range []string{"h1", "h2", "h3", "h4", "h5"} {
		fmt.Fprintf(&ini, "%s ansible_host=%s\n", n, l.Host(n).Addr)
	}
	fmt.Fprintf(&ini, "\n[broken]\ngone ansible_host=%s.99\nrekeyed ansible_host=%s\n", testlab.Subnet, l.Host("rekeyed").Addr)
	fmt.Fprintf(&ini, "\n[all:vars]\nansible_user=root\nansible_ssh_private_key_file=%s\n", l.Key)
	inv := filepath.Join(t.TempDir(), "lab.ini")
	if err := os.WriteFile(inv, []byte(ini.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "fleet.db")

	t.Run("audit", func(t *testing.T) { auditFleet(t, l, bin, inv, db) })
	t.Run("bench+report", func(t *testing.T) { benchFleet(t, l, bin, inv, db) })
}

func auditFleet(t *testing.T, l *testlab.Lab, bin, inv, db string) {
	r := perflab(t, l, bin, "audit", "--inventory", inv, "--on", "all", "--forks", "2", "--format", "json", "--db", db)
	t.Logf("stderr:\n%s", r.stderr)
	if r.code != 3 {
		t.Errorf("exit %d, want 3 (two hosts failed)", r.code)
	}
	var rep fleetJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, r.stdout)
	}
	if rep.MaxOpenSessions < 1 || rep.MaxOpenSessions > 2 || rep.Forks != 2 {
		t.Errorf("--forks 2: forks %d, at most %d SSH connections open at once, want 1–2", rep.Forks, rep.MaxOpenSessions)
	}
	if len(rep.Hosts) != 7 {
		t.Fatalf("%d hosts in the report, want 7", len(rep.Hosts))
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, h := range rep.Hosts {
		switch h.Host {
		case "gone":
			if h.Status != "unreachable" || !strings.Contains(h.Reason, testlab.Subnet+".99") {
				t.Errorf("gone: %s %q, want unreachable naming its address", h.Status, h.Reason)
			}
		case "rekeyed":
			if h.Status != "host key refused" || !strings.Contains(h.Reason, "HOST KEY CHANGED") {
				t.Errorf("rekeyed: %s %q, want host key refused, changed", h.Status, h.Reason)
			}
		default:
			var a struct {
				Host     string            `json:"host"`
				Findings []json.RawMessage `json:"findings"`
			}
			if h.Status != "ok" && h.Status != "findings" || json.Unmarshal(h.Output, &a) != nil || len(a.Findings) == 0 || a.Host != h.Host {
				t.Errorf("%s: %s %q, audit of host %q with %d findings; want its own audit", h.Host, h.Status, h.Reason, a.Host, len(a.Findings))
			}
			if len(h.Stored) != 1 || !strings.HasPrefix(h.Stored[0], "snapshot ") {
				t.Fatalf("%s: stored %v, want its snapshot", h.Host, h.Stored)
			}
			s, err := st.Snapshot(context.Background(), strings.TrimPrefix(h.Stored[0], "snapshot "))
			if err != nil || s.Host.Hostname != h.Host {
				t.Errorf("%s: stored snapshot: %v (hostname %v)", h.Host, err, s)
			}
		}
	}
	for _, want := range []string{"[gone] unreachable", "[rekeyed] host key refused", "[h1] starting"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q", want)
		}
	}
}

func benchFleet(t *testing.T, l *testlab.Lab, bin, inv, db string) {
	r := perflab(t, l, bin, "bench", "probe:cpu", "--inventory", inv, "--on", "lab", "--db", db,
		"--min-runs", "5", "--max-runs", "5", "--warmup", "0", "--no-noise-check", "--budget", "15s")
	t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	if r.code != 0 {
		t.Fatalf("bench exit %d", r.code)
	}
	for _, want := range []string{"HOST", "OUTCOME", "h1", "h4", "5 host(s)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("outcome table lacks %q", want)
		}
	}
	rep := perflab(t, l, bin, "fleet", "report", "--db", db, "--format", "json")
	if rep.code != 0 {
		t.Fatalf("fleet report exit %d: %s", rep.code, rep.stderr)
	}
	var fr struct {
		Settings []struct {
			Fact   string `json:"fact"`
			Values []struct {
				Value string   `json:"value"`
				Hosts []string `json:"hosts"`
			} `json:"values"`
		} `json:"settings"`
		Metrics []struct {
			Probe    string          `json:"probe"`
			Metric   string          `json:"metric"`
			Hosts    json.RawMessage `json:"hosts"`
			Outliers []struct {
				Hosts []string `json:"hosts"`
				Worse bool     `json:"worse"`
				Facts []struct {
					Fact string   `json:"fact"`
					Also []string `json:"same_split"`
				} `json:"separating_facts"`
			} `json:"outlier_groups"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(rep.stdout), &fr); err != nil {
		t.Fatalf("fleet json: %v", err)
	}
	quota := false
	for _, m := range fr.Metrics {
		t.Logf("%s %s: %s", m.Probe, m.Metric, m.Hosts)
		for _, g := range m.Outliers {
			if m.Probe == "cpu" && g.Worse && strings.Join(g.Hosts, ",") == "h3" {
				for _, f := range g.Facts {
					quota = quota || strings.Contains(f.Fact+strings.Join(f.Also, " "), "cgroup.cpu_quota_us")
				}
			}
		}
	}
	if !quota {
		t.Errorf("fleet report does not name h3 the cpu outlier separated by its cgroup quota:\n%s", rep.stdout)
	}
	sysctls := map[string]bool{}
	for _, s := range fr.Settings {
		for _, v := range s.Values {
			if strings.Join(v.Hosts, ",") == "h4" && len(s.Values) == 2 {
				sysctls[s.Fact] = true
			}
		}
	}
	for _, want := range []string{"sysctl.net.core.somaxconn", "sysctl.net.ipv4.tcp_rmem"} {
		if !sysctls[want] {
			t.Errorf("differing settings lack %s with h4 on one side: %v", want, sysctls)
		}
	}
}

// TestFanoutOutcomes: six inventory hosts at --forks 3 — four lab hosts
// (each with its own home, as separate machines), one whose inventory
// names a key it does not accept, and an address with no host. Each host
// gets its own outcome with its reason; the four are stored, each with
// the snapshot it sent. The first run copies perflab into each host's
// cache (named by its SHA-256); the second, an audit, uses the cached
// build everywhere, copies nothing, and stores the very snapshot it
// audited. (Results streaming as hosts finish is TestOutcomesStream's.)
func TestFanoutOutcomes(t *testing.T) {
	testenv.Short(t)
	l := testlab.Start(t, testlab.Options{Prefix: "fo", OwnHome: true, Hosts: []testlab.HostSpec{
		{Name: "f1"}, {Name: "f2"}, {Name: "f3"}, {Name: "f4"}, {Name: "wrongkey"},
	}})
	bin := buildPerflab(t)
	if err := l.TrustAll(); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	var ini strings.Builder
	ini.WriteString("[lab]\n")
	for _, n := range []string{"f1", "f2", "f3", "f4"} {
		fmt.Fprintf(&ini, "%s ansible_host=%s\n", n, l.Host(n).Addr)
	}
	fmt.Fprintf(&ini, "wrongkey ansible_host=%s ansible_ssh_private_key_file=%s\n", l.Host("wrongkey").Addr, other)
	fmt.Fprintf(&ini, "gone ansible_host=%s.99\n", testlab.Subnet)
	fmt.Fprintf(&ini, "\n[all:vars]\nansible_user=root\nansible_ssh_private_key_file=%s\n", l.Key)
	inv := filepath.Join(t.TempDir(), "lab.ini")
	if err := os.WriteFile(inv, []byte(ini.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "fleet.db")
	st := func() *store.Store {
		s, err := store.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}()
	for round, cmd := range []string{"snapshot", "audit"} {
		r := perflab(t, l, bin, cmd, "--inventory", inv, "--on", "all", "--forks", "3", "--format", "json", "--db", db)
		if r.code != 3 {
			t.Errorf("%s: exit %d, want 3 (two hosts failed)\n%s", cmd, r.code, r.stderr)
		}
		var rep fleetJSON
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%s json: %v\n%s", cmd, err, r.stdout)
		}
		if len(rep.Hosts) != 6 || rep.MaxOpenSessions > 3 {
			t.Errorf("%s: %d hosts, %d connections at once; want 6 hosts, at most 3", cmd, len(rep.Hosts), rep.MaxOpenSessions)
		}
		for _, h := range rep.Hosts {
			switch h.Host {
			case "gone":
				if h.Status != "unreachable" || !strings.Contains(h.Reason, testlab.Subnet+".99") {
					t.Errorf("%s: gone: %s %q, want unreachable naming its address", cmd, h.Status, h.Reason)
				}
			case "wrongkey":
				if h.Status != "auth failed" {
					t.Errorf("%s: wrongkey: %s %q, want auth failed", cmd, h.Status, h.Reason)
				}
			default:
				if h.Status != "ok" && h.Status != "findings" || len(h.Stored) != 1 || h.Phases == nil || h.Phases["run"] <= 0 {
					t.Errorf("%s: %s: %s %q stored %v phases %v; want it run and its snapshot stored", cmd, h.Host, h.Status, h.Reason, h.Stored, h.Phases)
					continue
				}
				id := strings.TrimPrefix(h.Stored[0], "snapshot ")
				s, err := st.Snapshot(context.Background(), id)
				if err != nil || s.Host.Hostname != h.Host {
					t.Errorf("%s: %s: stored snapshot %s: %v", cmd, h.Host, id, err)
				}
				var a struct {
					SnapshotID string `json:"snapshot_id"`
				}
				if cmd == "audit" && (json.Unmarshal(h.Output, &a) != nil || a.SnapshotID != id) {
					t.Errorf("audit: %s audited snapshot %q, stored %s: want the one audited stored", h.Host, a.SnapshotID, id)
				}
				cached, _ := filepath.Glob(filepath.Join(l.Host(h.Host).Dir, "root/.cache/perflab/bin/perflab-*"))
				if len(cached) != 1 {
					t.Errorf("%s: %s: cached builds %v, want one in its own ~/.cache/perflab/bin", cmd, h.Host, cached)
				}
				note := map[bool]string{false: "[" + h.Host + "] note: " + h.Host + ": copied perflab", true: "[" + h.Host + "] note: " + h.Host + ": using the cached perflab"}[round == 1]
				if !strings.Contains(r.stderr, note) {
					t.Errorf("%s: progress lacks %q:\n%s", cmd, note, r.stderr)
				}
			}
		}
		if round == 1 && strings.Contains(r.stderr, "copied perflab") {
			t.Errorf("audit copied perflab again although every host has it cached:\n%s", r.stderr)
		}
	}
}
