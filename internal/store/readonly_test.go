package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// dirState is what a read-only open must leave exactly as it found: the
// names in the directory and the database's bytes.
func dirState(t *testing.T, path string) (names []string, data string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return names, string(b)
}

func assertUntouched(t *testing.T, path string, names []string, data string) {
	t.Helper()
	n2, d2 := dirState(t, path)
	if !reflect.DeepEqual(names, n2) {
		t.Errorf("directory changed: %v, was %v", n2, names)
	}
	if d2 != data {
		t.Error("database file changed")
	}
}

// storedDB makes a database with two runs and closes it, as a bench leaves
// it: WAL mode, everything checkpointed, no -wal or -shm file.
func storedDB(t *testing.T) string {
	t.Helper()
	s, path := openTemp(t)
	t0 := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	if err := s.SaveRun(ctx, newRun("ro1", "before", "cpu", "snapR", t0), newSnap("snapR")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRun(ctx, newRun("ro2", "after", "cpu", "snapR", t0.Add(time.Hour)), newSnap("snapR")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readOnlyShare makes path and its directory read-only as an operator
// sharing a database would (root is not stopped by the bits; the read-only
// mode is what is under test).
func readOnlyShare(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Dir(path), 0o755) })
}

func TestOpenReadOnlyReadsAndWritesNothing(t *testing.T) {
	path := storedDB(t)
	readOnlyShare(t, path)
	names, data := dirState(t, path)
	if !reflect.DeepEqual(names, []string{"perflab.db"}) {
		t.Fatalf("a closed database left %v", names)
	}
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, Filter{})
	if err != nil || len(runs) != 2 || runs[0].ID != "ro2" || len(runs[0].Samples) != 4 {
		t.Fatalf("Runs: %d runs, %v", len(runs), err)
	}
	if r, err := s.Run(ctx, "ro1"); err != nil || r.Label != "before" {
		t.Errorf("Run: %+v %v", r, err)
	}
	if snap, err := s.Snapshot(ctx, "snapR"); err != nil || snap.Sysctl["vm.swappiness"] != "10" {
		t.Errorf("Snapshot: %v", err)
	}
	if ls, err := s.Labels(ctx); err != nil || len(ls) != 2 {
		t.Errorf("Labels: %+v %v", ls, err)
	}
	// Writes fail with the store's reason, not SQLite's, and change nothing.
	err = s.SaveRun(ctx, newRun("ro3", "", "cpu", "", time.Now()), nil)
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "open for reading only") || !strings.Contains(err.Error(), path) {
		t.Errorf("SaveRun on a read-only store: %v", err)
	}
	if err := s.Delete(ctx, "ro1"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Delete on a read-only store: %v", err)
	}
	// Even a write that bypasses those checks is refused by SQLite, and
	// writeErr turns its refusal into the same error.
	_, err = s.db.Exec(`DELETE FROM runs`)
	if err == nil || !errors.Is(s.writeErr(err), ErrReadOnly) {
		t.Errorf("raw write through a read-only store: %v", err)
	}
	if runs, _ := s.Runs(ctx, Filter{}); len(runs) != 2 {
		t.Errorf("%d runs after refused writes, want 2", len(runs))
	}
	assertUntouched(t, path, names, data)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertUntouched(t, path, names, data)
}

// With a writer connected, its commits sit in the -wal until it closes; a
// reader must see them (so it cannot read the file as immutable) and must
// still create nothing.
func TestOpenReadOnlySeesLiveWriter(t *testing.T) {
	w, path := openTemp(t)
	if err := w.SaveRun(ctx, newRun("live1", "", "cpu", "", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	names, _ := dirState(t, path)
	if !reflect.DeepEqual(names, []string{"perflab.db", "perflab.db-shm", "perflab.db-wal"}) {
		t.Fatalf("an open writer has %v", names)
	}
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Run(ctx, "live1"); err != nil {
		t.Errorf("reader misses a run committed to the WAL: %v", err)
	}
	if err := w.SaveRun(ctx, newRun("live2", "", "cpu", "", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "live2"); err != nil {
		t.Errorf("reader misses a run committed after it opened: %v", err)
	}
	if err := r.Delete(ctx, "live1"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Delete through the reader: %v", err)
	}
	if n, _ := dirState(t, path); !reflect.DeepEqual(n, names) {
		t.Errorf("reader changed the directory: %v", n)
	}
}

func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "perflab.db")
	_, err := OpenReadOnly(missing)
	if !errors.Is(err, ErrNoDatabase) || !strings.Contains(err.Error(), "no runs are stored yet") || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing database: %v, want ErrNoDatabase naming %s", err, missing)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("opening a missing database read-only created %v", ents)
	}
	// The default location is not created either.
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	if _, err := OpenReadOnly(""); !errors.Is(err, ErrNoDatabase) || !strings.Contains(err.Error(), filepath.Join(home, "perflab", "perflab.db")) {
		t.Errorf("missing default database: %v", err)
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("read-only open of the default database created %v", ents)
	}
	// An empty file (touch) is an empty database: nothing stored yet.
	if err := os.WriteFile(missing, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenReadOnly(missing); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("empty file: %v, want ErrNoDatabase", err)
	}
	if st, err := os.Stat(missing); err != nil || st.Size() != 0 {
		t.Errorf("empty file written to: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("read-only open of an empty file left %d files", len(ents))
	}
}

func TestOpenReadOnlyRefusesNewerSchemaUntouched(t *testing.T) {
	path := newerSchemaDB(t, "new1")
	names, data := dirState(t, path)
	_, err := OpenReadOnly(path)
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "upgrade perflab") {
		t.Fatalf("newer schema: %v, want ErrNewerSchema saying to upgrade", err)
	}
	assertUntouched(t, path, names, data)
}

func TestOpenReadOnlyOlderSchema(t *testing.T) {
	path := storedDB(t) // the current schema
	names, data := dirState(t, path)
	// Pretend this perflab writes the next schema.
	oldSchema, oldReadable := SchemaVersion, oldestReadable
	t.Cleanup(func() { SchemaVersion, oldestReadable = oldSchema, oldReadable })
	SchemaVersion = oldSchema + 1

	// A migration that only added something: schema 1 is read as it is.
	oldestReadable = oldSchema
	s, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("compatible older schema: %v", err)
	}
	if runs, err := s.Runs(ctx, Filter{}); err != nil || len(runs) != 2 {
		t.Errorf("reading a compatible older schema: %d runs, %v", len(runs), err)
	}
	s.Close()

	// A migration that changed what the queries read: say how to migrate.
	oldestReadable = oldSchema + 1
	_, err = OpenReadOnly(path)
	if !errors.Is(err, ErrOlderSchema) || !strings.Contains(err.Error(), fmt.Sprintf("schema %d,", oldSchema)) || !strings.Contains(err.Error(), "perflab bench") {
		t.Errorf("incompatible older schema: %v, want ErrOlderSchema saying how to migrate", err)
	}
	assertUntouched(t, path, names, data)
}

func TestOpenReadOnlyRefusesBadTargets(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not sqlite ", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dsn  string
		is   error
		want string
	}{
		{filepath.Join(dir, "missing", "x.db"), ErrBadPath, "does not exist"},
		{dir, ErrBadPath, "is a directory"},
		{garbage, ErrNotPerflab, "not a SQLite database"},
	} {
		s, err := OpenReadOnly(c.dsn)
		if err == nil {
			s.Close()
			t.Errorf("OpenReadOnly(%s) succeeded", c.dsn)
			continue
		}
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OpenReadOnly(%s): %v, want %v saying %q", c.dsn, err, c.is, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("refused opens left %d files, want only garbage.db", len(ents))
	}
}

// Open refuses up front a database its owner made read-only, even for root
// (whom the permission bits do not stop), rather than writing into it.
func TestOpenRefusesReadOnlyDatabase(t *testing.T) {
	path := storedDB(t)
	readOnlyShare(t, path)
	names, data := dirState(t, path)
	_, err := Open(path)
	if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), "mode 0444") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a read-only database: %v, want ErrReadOnly naming the file and its mode", err)
	}
	assertUntouched(t, path, names, data)
}

// What access(2) reports (which root meets only on a read-only mount) is
// named, with the file or directory at fault.
func TestReadOnlyErrNamesTheCause(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "perflab.db")
	for _, c := range []struct {
		p    string
		err  error
		want string
	}{
		{db, unix.EROFS, db + " is on a read-only filesystem"},
		{db, unix.EACCES, "no permission to write " + db},
		{dir, unix.EACCES, "no permission to write its directory " + dir + ", which SQLite needs for " + db},
		{db + "-wal", unix.EPERM, "no permission to write " + db + "-wal"},
	} {
		err := readOnlyErr(db, c.p, c.err)
		if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("readOnlyErr(%s, %v) = %v, want %q", c.p, c.err, err, c.want)
		}
	}
}
