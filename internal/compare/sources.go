package compare

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
)

// SideErrorKind says why an argument names no runs.
type SideErrorKind int

const (
	NoSuchFile   SideErrorKind = iota + 1 // looks like a path, and none exists
	NoDatabase                            // not a file, and there is no run database
	OpenFailed                            // the run database could not be opened (Err)
	UnknownName                           // neither a file, a label nor a run id
	AmbiguousID                           // a run id prefix matching several runs
	EmptyFile                             // a file with nothing in it
	BadExport                             // a JSON file that is no readable run export (Err)
	NoRunsInFile                          // an export without runs
	NotRunFile                            // neither a run export nor Go benchmark output
	ReadFailed                            // an I/O or database error (Err)
)

// SideError is an argument of compare or report that names no runs. Kind
// classifies it for the caller's exit code and hint.
type SideError struct {
	Arg  string
	Kind SideErrorKind
	Msg  string
	Err  error
}

func (e *SideError) Error() string { return e.Msg }
func (e *SideError) Unwrap() error { return e.Err }

// Sources resolves command-line arguments to sides: a file (a run export
// or Go benchmark output), else a label of the run database (all its
// runs), else a run id or unique prefix; A,B,… joins several labels or
// ids into one side. The database is opened only when
// an argument needs it.
type Sources struct {
	// Open opens the run database (read-only: comparing only reads).
	Open func() (*store.Store, error)
	st   *store.Store
}

// Close closes the database if an argument opened it.
func (s *Sources) Close() {
	if s.st != nil {
		s.st.Close()
	}
}

// Sides resolves every argument, in order.
func (s *Sources) Sides(ctx context.Context, args []string) ([]Side, error) {
	var out []Side
	for _, a := range args {
		side, err := s.Side(ctx, a)
		if err != nil {
			return nil, err
		}
		out = append(out, side)
	}
	return out, nil
}

// Side resolves one argument. A path that exists is read as a file; other
// arguments are looked up in the database as a label and then as a run id.
func (s *Sources) Side(ctx context.Context, arg string) (Side, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		return ReadSideFile(arg)
	}
	side, err := s.sideFromStore(ctx, arg)
	var se *SideError
	if err != nil && looksLikeFile(arg) && errors.As(err, &se) && (se.Kind == UnknownName || se.Kind == NoDatabase) {
		// A label may hold a '/' ('bench --state … --label ab' stores
		// ab/base): only when no such label exists is it a missing file.
		return side, &SideError{arg, NoSuchFile, arg + ": no such file, and no label or run id of that name", nil}
	}
	return side, err
}

func (s *Sources) sideFromStore(ctx context.Context, arg string) (Side, error) {
	side := Side{Name: arg, Snapshots: map[string]*snapshot.Snapshot{}}
	if parts := strings.Split(arg, ","); len(parts) > 1 {
		// ID,ID,…: several runs (or labels) as one side, as the console
		// links its hosts page's comparisons.
		for _, p := range parts {
			sub, err := s.sideFromStore(ctx, p)
			if err != nil {
				return side, err
			}
			side.Runs = append(side.Runs, sub.Runs...)
			maps.Copy(side.Snapshots, sub.Snapshots)
		}
		return side, nil
	}
	if s.st == nil {
		st, err := s.Open()
		if errors.Is(err, store.ErrNoDatabase) {
			return side, &SideError{arg, NoDatabase, fmt.Sprintf("%q is neither a file, a label nor a run id, and %v", arg, err), err}
		}
		if err != nil {
			return side, &SideError{arg, OpenFailed, err.Error(), err}
		}
		s.st = st
	}
	runs, err := s.runs(ctx, arg)
	if err != nil {
		return side, err
	}
	side.Runs = runs
	for _, r := range runs {
		if r.SnapshotID == "" || side.Snapshots[r.SnapshotID] != nil {
			continue
		}
		// A run without its snapshot can still be compared; only the
		// explanation is poorer.
		if snap, err := s.st.Snapshot(ctx, r.SnapshotID); err == nil {
			side.Snapshots[r.SnapshotID] = snap
		}
	}
	return side, nil
}

// runs are the runs with label arg, or the one run with id (prefix) arg.
func (s *Sources) runs(ctx context.Context, arg string) ([]*run.Run, error) {
	runs, err := s.st.Runs(ctx, store.Filter{Label: arg})
	if err != nil {
		return nil, &SideError{arg, ReadFailed, fmt.Sprintf("read runs: %v", err), err}
	}
	if len(runs) > 0 {
		return runs, nil
	}
	r, err := s.st.Run(ctx, arg)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, &SideError{arg, UnknownName, fmt.Sprintf("%q is neither a file, a label nor a run id in %s", arg, s.st.Path), err}
	case errors.Is(err, store.ErrAmbiguous):
		return nil, &SideError{arg, AmbiguousID, err.Error(), err}
	case err != nil:
		return nil, &SideError{arg, ReadFailed, fmt.Sprintf("read run %s: %v", arg, err), err}
	}
	return []*run.Run{r}, nil
}

// History is the database's earlier runs of the sides' probes on the
// sides' hosts (store.History) for the A/A noise floor. It only uses a
// database an argument already opened: files alone have no history.
func (s *Sources) History(ctx context.Context, sides []Side) []*run.Run {
	if s.st == nil {
		return nil
	}
	var runs []*run.Run
	for _, sd := range sides {
		runs = append(runs, sd.Runs...)
	}
	return s.st.History(ctx, runs)
}

func looksLikeFile(arg string) bool {
	return strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, ".json") || strings.HasSuffix(arg, ".txt")
}

// ReadSideFile reads a run export (JSON) or Go benchmark output (text),
// telling them apart by the first non-blank byte.
func ReadSideFile(path string) (Side, error) {
	side := Side{Name: path, Snapshots: map[string]*snapshot.Snapshot{}}
	f, err := os.Open(path)
	if err != nil {
		return side, &SideError{path, ReadFailed, err.Error(), err}
	}
	defer f.Close()
	br := bufio.NewReader(f)
	first, err := firstByte(br)
	if err != nil {
		return side, &SideError{path, EmptyFile, path + " is empty", nil}
	}
	if first == '{' {
		ex, err := run.ReadExport(br)
		if err != nil {
			return side, &SideError{path, BadExport, fmt.Sprintf("%s: %v", path, err), err}
		}
		if len(ex.Runs) == 0 {
			return side, &SideError{path, NoRunsInFile, path + ": the export holds no runs", nil}
		}
		side.Runs, side.Snapshots = ex.Runs, ex.Snapshots
		return side, nil
	}
	runs, err := ReadGoBench(br, path)
	if errors.Is(err, ErrNotGoBench) {
		return side, &SideError{path, NotRunFile, path + " is neither a perflab run export nor Go benchmark output", err}
	}
	if err != nil {
		return side, &SideError{path, ReadFailed, err.Error(), err}
	}
	side.Runs = runs
	return side, nil
}

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return b, br.UnreadByte()
		}
	}
}
