package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/testenv"
)

func TestSnapshotCLIJSONRoundTrip(t *testing.T) {
	code, out, stderr := runCLI(t, "snapshot", "--root", fixture.Dir("metal"), "--format", "json")
	if code != clierr.OK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := snapshot.Unmarshal([]byte(out))
	if err != nil {
		t.Fatalf("json does not parse back: %v", err)
	}
	if s.Cgroup.CPUQuotaUS != 200000 || s.Net.Conntrack.Count != 241877 || len(s.Block) != 2 {
		t.Errorf("round-tripped facts wrong: cgroup %+v conntrack %+v block %d", s.Cgroup, s.Net.Conntrack, len(s.Block))
	}
	if s.Root != fixture.Dir("metal") && !strings.HasSuffix(s.Root, "testdata/roots/metal") {
		t.Errorf("root = %q", s.Root)
	}
}

func TestSnapshotCLIOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.json")
	code, out, stderr := runCLI(t, "snapshot", "--root", fixture.Dir("metal"), "--format", "json", "-o", path)
	if code != clierr.OK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if out != "" {
		t.Errorf("stdout not empty with -o: %q", out)
	}
	if !strings.Contains(stderr, "written to "+path) {
		t.Errorf("stderr = %q", stderr)
	}
	s, err := snapshot.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Services["irqbalance"].Running != true {
		t.Errorf("irqbalance not running in the written snapshot")
	}
}

func TestSnapshotCLIText(t *testing.T) {
	code, out, stderr := runCLI(t, "snapshot", "--root", fixture.Dir("metal"), "--verbose")
	if code != clierr.OK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"25000 Mb/s", "write through", "CPU quota 2.00 CPUs", "tools.sysbench: sysbench not found"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes written to a non-terminal")
	}
}

func TestSnapshotCLIPID(t *testing.T) {
	code, out, stderr := runCLI(t, "snapshot", "--root", fixture.Dir("metal"), "--format", "json", "--pid", "4243")
	if code != clierr.OK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := snapshot.Unmarshal([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if s.Cgroup.Path != "/system.slice/app.service" {
		t.Errorf("cgroup of pid 4243 = %q", s.Cgroup.Path)
	}
}

func TestSnapshotCLIBadInput(t *testing.T) {
	notRoot := t.TempDir()
	if err := os.WriteFile(filepath.Join(notRoot, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--root", notRoot}, "is not a Linux root tree"},
		{[]string{"--root", filepath.Join(notRoot, "nope")}, "is not a Linux root tree"},
		{[]string{"--root", filepath.Join(notRoot, "file")}, "is not a Linux root tree"},
		{[]string{"--format", "yaml"}, `unknown --format "yaml"`},
		{[]string{"--root", fixture.Dir("metal"), "--pid", "999999"}, "no process 999999"},
		{[]string{"--pid", "-3"}, "not a process ID"},
		{[]string{"extra-arg"}, "unknown command"},
	} {
		code, out, stderr := runCLI(t, append([]string{"snapshot"}, c.args...)...)
		if code != clierr.Usage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, clierr.Usage, stderr)
		}
		if !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: stderr %q, want one line with %q", c.args, stderr, c.want)
		}
		if out != "" {
			t.Errorf("%v: stdout %q on error", c.args, out)
		}
	}
}

func TestSnapshotCLILive(t *testing.T) {
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		testenv.Unavailable(t, "needs a Linux /proc")
	}
	code, out, stderr := runCLI(t, "snapshot", "--format", "json")
	if code != clierr.OK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s, err := snapshot.Unmarshal([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if s.Root != "/" || len(s.Net.Interfaces) == 0 {
		t.Errorf("live snapshot: root %q, %d interfaces", s.Root, len(s.Net.Interfaces))
	}
}
