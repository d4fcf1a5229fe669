package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

func TestWriteTextMetal(t *testing.T) {
	t.Parallel()
	s, err := snapshot.Collect(rootFS(t, "metal"), snapshot.Options{Now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"taken 2025-03-01 12:00:00 UTC",
		"eth0  i40e 0000:af:00.0  up  25000 Mb/s  MTU 1500  node 1  8 rx/8 tx queues  RPS off  9 IRQs 101-108 on CPUs 0-3, 100 on CPUs 0-7",
		"conntrack 241877/262144 entries (92%)",
		"sda  DELL PERC H730P Mini  1.1 TiB  rotational  sched mq-deadline  read-ahead 128 KiB  nr_requests 256  write through",
		"nvme0n1",
		"/data  xfs  /dev/nvme0n1p1  rw,noatime",
		"CPU quota 2.00 CPUs (200000/100000 µs)",
		"throttled in 22.4% of 1843200 periods (9823.4 s)",
		"memory max 16.0 GiB",
		"auditd (pid 1254), irqbalance (pid 1187)",
		"tools     ethtool fio perf",
		"facts unavailable (--verbose lists them)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour written with colour off")
	}
	if n := strings.Count(out, "\n"); n > 30 {
		t.Errorf("summary is %d lines; it must fit one screen:\n%s", n, out)
	}

	b.Reset()
	if err := SnapshotText(&b, s, termfmt.Style{On: true}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "tools.sysbench") || !strings.Contains(b.String(), "sysbench not found") {
		t.Errorf("--verbose does not list unavailable facts with reasons:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "\x1b[1m") {
		t.Error("no bold labels with colour on")
	}
}

func TestWriteTextEmptySnapshot(t *testing.T) {
	s := &snapshot.Snapshot{Schema: snapshot.Schema, Root: "/x", Unavailable: map[string]string{"proc": "no /proc"}}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 fact unavailable:") || !strings.Contains(b.String(), "proc: no /proc") {
		t.Errorf("empty snapshot summary:\n%s", b.String())
	}
}

// rootFS reads testdata/roots/name in place (read-only: nothing edits it).
func rootFS(t testing.TB, name string) hostfs.FS {
	t.Helper()
	fs, err := hostfs.New(fixture.Dir(name))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return fs
}
