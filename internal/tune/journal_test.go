package tune

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/knob"
	"github.com/perflab/perflab/internal/testenv"
)

// applied returns a tree with a journal from a real apply, and the journal.
func applied(t *testing.T) (hostfs.FS, Host, *Journal) {
	t.Helper()
	fs := fakeRoot(t)
	h := Host{FS: fs}
	if _, err := h.Apply(context.Background(), webPlan(), ApplyOptions{Source: "test", Persist: true}); err != nil {
		t.Fatal(err)
	}
	j, err := h.loadJournal()
	if err != nil || j == nil {
		t.Fatalf("journal after apply: %v, %v", j, err)
	}
	return fs, h, j
}

func writeJournal(t *testing.T, h Host, j *Journal) {
	t.Helper()
	b, _ := json.Marshal(j)
	if err := os.WriteFile(h.journalPath(), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// treeState reads every file of the tree and the outside files.
func treeState(t *testing.T, dirs ...string) map[string]string {
	out := map[string]string{}
	for _, d := range dirs {
		filepath.Walk(d, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(p, "lock") {
				b, _ := os.ReadFile(p)
				out[p] = string(b)
			}
			return nil
		})
	}
	return out
}

// TestRevertRefusesHandEditedJournal: a journal naming anything outside the
// root's /proc/sys and /sys (or a persisted file not perflab's) is refused
// whole on load: revert changes nothing and says so in one line.
func TestRevertRefusesHandEditedJournal(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(j *Journal)
	}{
		{"file target /etc/passwd", func(j *Journal) { j.Entries[2].Change.Target = "/etc/passwd" }},
		{"file target climbing out", func(j *Journal) { j.Entries[2].Change.Target = "/sys/../etc/passwd" }},
		{"file target /proc/irq other", func(j *Journal) { j.Entries[2].Change.Target = "/proc/irq/1/../../self/mem" }},
		{"file target /proc/self", func(j *Journal) { j.Entries[2].Change.Target = "/proc/self/oom_score_adj" }},
		{"sysctl with a slash", func(j *Journal) { j.Entries[0].Change.Target = "../../etc/passwd" }},
		{"sysctl climbing", func(j *Journal) { j.Entries[0].Change.Target = "..etc.passwd" }},
		{"command kind", func(j *Journal) { j.Entries[0].Change.Kind = audit.KindCommand }},
		{"NIC with a slash", func(j *Journal) { j.Entries[0].Change.Kind, j.Entries[0].Change.Target = audit.KindChannels, "../eth0" }},
		{"persisted /etc/shadow", func(j *Journal) { j.Persisted[0].Path = "/etc/shadow" }},
		{"persisted new file", func(j *Journal) {
			j.Persisted = append(j.Persisted, Persisted{Path: "/etc/cron.d/x", Old: "* * * * * root sh"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, h, j := applied(t)
			tc.edit(j)
			writeJournal(t, h, j)
			before := treeState(t, fs.Root())
			_, err := h.Revert(RevertOptions{Force: true})
			var je *JournalError
			if !errors.As(err, &je) {
				t.Fatalf("revert of an edited journal = %v, want a JournalError", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "restore by hand") {
				t.Errorf("error is not one line naming the fix: %q", msg)
			}
			if after := treeState(t, fs.Root()); !equalMaps(before, after) {
				t.Error("revert of an edited journal changed files")
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestJournalOwnerAndMode: a journal others can write is refused.
func TestJournalOwnerAndMode(t *testing.T) {
	testenv.RequireRoot(t) // chown
	for _, tc := range []struct {
		name string
		mess func(h Host) error
		want string
	}{
		{"journal 0666", func(h Host) error { return os.Chmod(h.journalPath(), 0o666) }, "chmod go-w"},
		{"dir 0777", func(h Host) error { return os.Chmod(h.dir(), 0o777) }, "chmod go-w"},
		{"journal owned by nobody", func(h Host) error { return os.Chown(h.journalPath(), 65534, 65534) }, "chown root"},
		{"dir owned by nobody", func(h Host) error { return os.Chown(h.dir(), 65534, 65534) }, "chown root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, h, _ := applied(t)
			if err := tc.mess(h); err != nil {
				t.Fatal(err)
			}
			before := treeState(t, fs.Root())
			_, err := h.Revert(RevertOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("revert = %v, want a refusal naming %q", err, tc.want)
			}
			if !equalMaps(before, treeState(t, fs.Root())) {
				t.Error("a refused journal changed files")
			}
		})
	}
}

// TestJournalLinksAreNotFollowed: a journal, its directory or a planted temp
// file as links never redirect a read or a write.
func TestJournalLinksAreNotFollowed(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, h, j := applied(t)
	// Planted temp files at every name the old code used.
	for _, n := range []string{"journal.json.tmp", ".journal.json.tmp"} {
		if err := os.Symlink(outside, filepath.Join(h.dir(), n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.save(h); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious\n" {
		t.Fatalf("a planted temp link redirected the journal save: %q", b)
	}
	// The journal itself a link.
	// (Moved by copy: the tree and the temp dir may be different file
	// systems.)
	b, err := os.ReadFile(h.journalPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside+".json", b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(h.journalPath())
	if err := os.Symlink(outside+".json", h.journalPath()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Revert(RevertOptions{}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("revert through a journal link = %v", err)
	}
	// A symlinked knob in the tree: the write stays inside the root.
	knob := fs.Path("/proc/sys/net/core/somaxconn")
	os.Remove(knob)
	if err := os.Symlink(outside, knob); err != nil {
		t.Fatal(err)
	}
	h2 := Host{FS: fs, Dir: t.TempDir()}
	h2.Apply(context.Background(), webPlan(), ApplyOptions{})
	if b, _ := os.ReadFile(outside); string(b) != "precious\n" {
		t.Fatalf("apply wrote through a symlinked knob out of the tree: %q", b)
	}
}

// FuzzJournalLoad: any journal bytes load or are refused with an error,
// and an accepted journal names only knobs tune writes.
func FuzzJournalLoad(f *testing.F) {
	f.Add([]byte(`{"schema":1,"entries":[{"change":{"kind":"file","target":"/etc/passwd"}}]}`))
	f.Add([]byte(`{"schema":1,"entries":[{"change":{"kind":"sysctl","target":"net.core.somaxconn"}}],"persisted":[{"path":"/etc/sysctl.d/99-perflab.conf"}]}`))
	f.Add([]byte(`{"schema":1,"persisted":[{"path":"/etc/shadow"}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		h := Host{Dir: dir}
		if err := os.WriteFile(h.journalPath(), b, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := h.loadJournal()
		if err != nil || j == nil {
			return
		}
		for _, e := range j.Entries {
			p := path(e.Change)
			if e.Change.Kind != audit.KindChannels && !strings.HasPrefix(filepath.Clean(p), "/proc/sys/") && !strings.HasPrefix(filepath.Clean(p), "/sys/") && !catalogued(p) {
				t.Fatalf("accepted a journal writing %q", p)
			}
		}
		for _, p := range j.Persisted {
			if p.Path != PersistPath {
				t.Fatalf("accepted persisted %q", p.Path)
			}
		}
	})
}

func catalogued(p string) bool {
	_, ok := knob.ForFile(p)
	return ok && strings.HasPrefix(p, "/proc/")
}
