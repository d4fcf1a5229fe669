package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/spf13/cobra"
)

// openStore opens --db read-write, for commands that store or delete runs,
// turning the store's failures into one line with the fix.
func openStore(db string) (*store.Store, error) {
	s, err := store.Open(db)
	if err != nil {
		return nil, storeOpenErr(err)
	}
	return s, nil
}

// openStoreReadOnly opens --db for commands that only read runs: it works
// on a database this user may not write and never creates or migrates one.
// A missing database is store.ErrNoDatabase (still in the chain), which
// some readers answer with an empty result instead.
// storeReport keeps a result (bisect, search) in the run database as a
// report of that kind under a new id; perflab report KIND:ID shows it again.
func storeReport(ctx context.Context, db, kind string, result any) (string, error) {
	st, err := openStore(db)
	if err != nil {
		return "", err
	}
	defer st.Close()
	var b bytes.Buffer
	if err := report.Write(&b, result, report.FormatJSON, report.Options{}); err != nil {
		return "", err
	}
	id := snapshot.NewID()
	host, _ := os.Hostname()
	return id, st.SaveReport(ctx, store.Report{ID: id, Kind: kind, Created: time.Now().UTC(), Host: host, Doc: b.Bytes()})
}

func openStoreReadOnly(db string) (*store.Store, error) {
	s, err := store.OpenReadOnly(db)
	if err != nil {
		return nil, storeOpenErr(err)
	}
	return s, nil
}

// storeOpenErr classifies why a run database could not be opened.
func storeOpenErr(err error) error {
	switch {
	case errors.Is(err, store.ErrNewerSchema), errors.Is(err, store.ErrOlderSchema):
		return clierr.Wrap(clierr.Usage, err, "")
	case errors.Is(err, store.ErrNoDatabase):
		return clierr.Wrap(clierr.Usage, err, "store runs with 'perflab bench' first, or check --db")
	case errors.Is(err, store.ErrBadPath), errors.Is(err, store.ErrNotPerflab):
		return clierr.Usagef("check --db", "%v", err)
	case errors.Is(err, store.ErrUnreachable):
		return clierr.Wrap(clierr.Runtime, err, "is the server running, and the host and port in --db right?")
	case errors.Is(err, store.ErrReadOnly):
		return clierr.Wrap(clierr.Runtime, err, "this command writes: make the database and its directory writable for this user, or use another --db; runs list/show/export, compare and report only read and work on it as it is")
	}
	return clierr.Runtimef("check --db, or that the file is a perflab database and readable", "%v", err)
}

// storeErr classifies a lookup failure: a bad or ambiguous id is the user's
// to fix; anything else is the database's.
func storeErr(err error) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAmbiguous) {
		return clierr.Usagef("", "%v", err)
	}
	return clierr.Runtimef("", "%v", err)
}

func newRunsCmd(e *env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, show, export, import, delete, push and chart stored benchmark runs",
		Long: `runs manages the run database that 'perflab bench' writes (default
$XDG_DATA_HOME/perflab/perflab.db; --db for another file, or
postgres://user@host/dbname for a shared PostgreSQL store). A run id may be
abbreviated to any unique prefix, as with git. list, show and export only
read, so they work on a database this user may not write (shared read-only,
on a read-only mount, owned by root); import and rm need write access.
push uploads a local history into a shared store; history charts a metric
over time with its change points.`,
		Example: `  perflab runs list --label before
  perflab runs show 3f2a9c
  perflab runs export --label node7 -o node7.json
  perflab runs import node7.json --db /srv/perflab/fleet.db
  perflab runs rm 3f2a9c
  perflab runs push --db postgres://perflab@db.example/perflab
  perflab runs history cpu events_per_sec.t1 --host node7`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.PersistentFlags().StringVar(&db, "db", "", "run database (default $XDG_DATA_HOME/perflab/perflab.db)")
	cmd.AddCommand(newRunsListCmd(e, &db), newRunsShowCmd(e, &db), newRunsExportCmd(e, &db), newRunsImportCmd(e, &db), newRunsRmCmd(e, &db))
	cmd.AddCommand(newRunsPushCmd(e, &db), newRunsHistoryCmd(e, &db))
	return cmd
}

func filterFlags(cmd *cobra.Command, f *store.Filter) {
	cmd.Flags().StringVar(&f.Label, "label", "", "only runs with this label")
	cmd.Flags().StringVar(&f.Probe, "probe", "", "only runs of this probe")
	cmd.Flags().StringVar(&f.Host, "host", "", "only runs on this host")
	cmd.Flags().StringVar(&f.Suite, "suite", "", "only runs of this suite")
}

func newRunsListCmd(e *env, db *string) *cobra.Command {
	var (
		out    outputFlags
		f      store.Filter
		labels bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List stored runs, newest first (or the labels in use)",
		Example: `  perflab runs list
  perflab runs list --label before --probe cpu
  perflab runs list --labels
  perflab runs list --format json --limit 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			if f.Limit < 0 {
				return clierr.Usagef("", "--limit %d must not be negative", f.Limit)
			}
			// No database yet is an answer, not a failure: nothing is
			// stored, so the list is empty.
			s, openErr := store.OpenReadOnly(*db)
			if openErr != nil && !errors.Is(openErr, store.ErrNoDatabase) {
				return storeOpenErr(openErr)
			}
			if s != nil {
				defer s.Close()
			}
			if labels {
				return listLabels(cmd.Context(), e, &out, s)
			}
			return listRuns(cmd.Context(), e, &out, s, f, openErr)
		},
	}
	out.register(cmd, "text", "text", "json")
	filterFlags(cmd, &f)
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "at most this many runs (0: all)")
	cmd.Flags().BoolVar(&labels, "labels", false, "list the labels in use with their run counts instead")
	return cmd
}

// listLabels prints the labels in use; s is nil when there is no database.
func listLabels(ctx context.Context, e *env, out *outputFlags, s *store.Store) error {
	ls := []store.LabelCount{}
	if s != nil {
		var err error
		if ls, err = s.Labels(ctx); err != nil {
			return storeErr(err)
		}
	}
	return writeResult(out, e.stdout, report.LabelList(ls))
}

// listRuns prints the runs matching f; s is nil when there is no
// database (openErr says why).
func listRuns(ctx context.Context, e *env, out *outputFlags, s *store.Store, f store.Filter, openErr error) error {
	var runs []*run.Run
	if s != nil {
		var err error
		if runs, err = s.Runs(ctx, f); err != nil {
			return storeErr(err)
		}
	}
	if out.format == report.FormatText {
		switch {
		case s == nil:
			fmt.Fprintf(e.stderr, "%v (run 'perflab bench quick' to store one)\n", openErr)
			return writeOut(out, e.stdout, func(io.Writer) error { return nil })
		case len(runs) == 0:
			fmt.Fprintln(e.stderr, "no runs stored in "+s.Path+" match (run 'perflab bench quick' to make one)")
			return writeOut(out, e.stdout, func(io.Writer) error { return nil })
		}
	}
	return writeResult(out, e.stdout, report.RunList(runs))
}

func newRunsShowCmd(e *env, db *string) *cobra.Command {
	var (
		out     outputFlags
		series  bool
		samples bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one run: parameters, per-metric results, host activity, notes",
		Example: `  perflab runs show 3f2a9c
  perflab runs show 3f2a9c --monitor      # the 1-second host activity series
  perflab runs show 3f2a9c --format json  # the complete run with every sample`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			s, err := openStoreReadOnly(*db)
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := s.Run(cmd.Context(), args[0])
			if err != nil {
				return storeErr(err)
			}
			if err := writeResult(&out, e.stdout, &report.RunView{Run: r, Series: series, Samples: samples}); err != nil {
				return clierr.Runtimef("", "%v", err)
			}
			return nil
		},
	}
	out.register(cmd, "text", "text", "json", "md")
	cmd.Flags().BoolVar(&series, "monitor", false, "print the whole monitor series, not only its summary")
	cmd.Flags().BoolVar(&samples, "samples", false, "print every raw sample")
	return cmd
}

func newRunsExportCmd(e *env, db *string) *cobra.Command {
	var (
		out outputFlags
		f   store.Filter
	)
	cmd := &cobra.Command{
		Use:   "export [ID]...",
		Short: "Write runs with their snapshots to a self-contained JSON file",
		Long: `export writes the named runs (or every run matching the filters) with the
snapshots they refer to, in the versioned format of docs/formats.md, for
'perflab runs import' on another machine or 'perflab compare --file'.`,
		Example: `  perflab runs export --label before -o before.json
  perflab runs export 3f2a9c 81bd07 > two-runs.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			s, err := openStoreReadOnly(*db)
			if err != nil {
				return err
			}
			defer s.Close()
			runs, err := selectRuns(cmd.Context(), s, args, f)
			if err != nil {
				return err
			}
			ex, err := s.Export(cmd.Context(), runs)
			if err != nil {
				return storeErr(err)
			}
			w, commit, err := out.open(e.stdout)
			if err != nil {
				return err
			}
			if err := run.WriteExport(w, ex); err != nil {
				return clierr.Runtimef("", "export: %v", err)
			}
			if err := commit(); err != nil {
				return clierr.Runtimef("check that the directory is writable", "%v", err)
			}
			fmt.Fprintf(e.stderr, "exported %d run(s) and %d snapshot(s)\n", len(runs), len(ex.Snapshots))
			return nil
		},
	}
	out.register(cmd, "json", "json")
	filterFlags(cmd, &f)
	return cmd
}

func newRunsImportCmd(e *env, db *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Add runs from export files to the database",
		Long: `import reads files written by 'perflab runs export'. Every run of every
file is checked before anything is written and all are stored in one
transaction, so a corrupt or newer-format file, or one bad run, imports
nothing. Runs already in the database are skipped.`,
		Example: `  perflab runs import node7.json
  perflab runs import a.json b.json --db fleet.db`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var exports []*run.Export
			for _, path := range args {
				ex, err := readExportFile(path, e.stdin)
				if err != nil {
					return err
				}
				exports = append(exports, ex)
			}
			s, err := openStore(*db)
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.Import(cmd.Context(), exports...)
			var ie *store.ImportError
			if errors.As(err, &ie) && ie.Unwrap() == nil {
				return clierr.Usagef("fix or drop that run; nothing was imported", "%v", err)
			}
			if err != nil {
				return clierr.Runtimef("nothing was imported", "import: %v (%v)", err, errors.Unwrap(err))
			}
			fmt.Fprintf(e.stdout, "imported %d run(s) into %s", res.Stored, s.Path)
			if res.Skipped > 0 {
				fmt.Fprintf(e.stdout, "; %d already stored, skipped", res.Skipped)
			}
			fmt.Fprintln(e.stdout)
			return nil
		},
	}
	return cmd
}

// readExportFile reads an export file ("-" for standard input) and turns
// its failures into usage errors naming the file.
func readExportFile(path string, stdin io.Reader) (*run.Export, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, clierr.Usagef("check the path", "cannot read %s: %v", path, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	ex, err := run.ReadExport(r)
	if err != nil {
		return nil, exportErr(path, err, "it must be a file written by 'perflab runs export'")
	}
	return ex, nil
}

// exportErr is the usage error for a run export that cannot be read: hint
// for a corrupt or foreign file, an upgrade for a newer perflab's export.
func exportErr(path string, err error, hint string) error {
	if errors.Is(err, run.ErrNewerSchema) || errors.Is(err, snapshot.ErrNewerSchema) {
		hint = "upgrade perflab to read it"
	}
	return clierr.Usagef(hint, "%s: %v", path, err)
}

func newRunsRmCmd(e *env, db *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"delete"},
		Short:   "Delete runs (and snapshots no other run uses)",
		Example: `  perflab runs rm 3f2a9c
  perflab runs rm 3f2a9c 81bd07`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openStore(*db)
			if err != nil {
				return err
			}
			defer s.Close()
			ctx := cmd.Context()
			// Resolve every id first: one typo or ambiguous prefix deletes
			// nothing.
			var runs []*run.Run
			seen := map[string]bool{}
			for _, id := range args {
				r, err := s.Run(ctx, id)
				if err != nil {
					return storeErr(err)
				}
				if !seen[r.ID] {
					seen[r.ID] = true
					runs = append(runs, r)
				}
			}
			for _, r := range runs {
				if err := s.Delete(ctx, r.ID); err != nil {
					return storeErr(err)
				}
				fmt.Fprintf(e.stdout, "deleted run %s (%s%s, %s)\n", report.ShortID(r.ID), r.Probe, runsLabelSuffix(r.Label), r.Started.Local().Format("2006-01-02 15:04"))
			}
			return nil
		},
	}
	return cmd
}

func runsLabelSuffix(l string) string {
	if l == "" {
		return ""
	}
	return ", label " + l
}

// selectRuns are the runs named by id (prefix), or else matching f; none
// is a usage error.
func selectRuns(ctx context.Context, s *store.Store, ids []string, f store.Filter) ([]*run.Run, error) {
	var runs []*run.Run
	for _, id := range ids {
		r, err := s.Run(ctx, id)
		if err != nil {
			return nil, storeErr(err)
		}
		runs = append(runs, r)
	}
	if len(ids) == 0 {
		var err error
		if runs, err = s.Runs(ctx, f); err != nil {
			return nil, storeErr(err)
		}
	}
	if len(runs) == 0 {
		return nil, clierr.Usagef("see 'perflab runs list'", "no runs match")
	}
	return runs, nil
}
