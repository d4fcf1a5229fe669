package cli

import (
	"fmt"
	"io"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/termfmt"
	"github.com/spf13/cobra"
)

func newRunsPushCmd(e *env, db *string) *cobra.Command {
	var from string
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "push --db postgres://… [--from LOCAL.db]",
		Short: "Upload a local run history into a shared store (idempotent)",
		Long: `push copies every run of a local SQLite store (--from, default the usual
$XDG_DATA_HOME/perflab/perflab.db), with the snapshots they were taken on,
into the store named by --db, usually a shared PostgreSQL database. Runs are
identified by id: pushing again adds only runs not yet there, so a push can
be repeated or interrupted safely. Runs go 500 to a transaction (COPY on
PostgreSQL; 10,000 runs take seconds), over one connection; many hosts may
push into one store at once, and a run pushed by several is stored once.`,
		Example: `  perflab runs push --db postgres://perflab@db.example/perflab
  perflab runs push --db postgres://perflab@db.example/perflab --from node7.db
  PGPASSWORD=… perflab runs push --db 'postgres://perflab@db/perflab?sslmode=require'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			return runPush(cmd, e, &out, *db, from)
		},
	}
	out.register(cmd, "text", "text", "json")
	cmd.Flags().StringVar(&from, "from", "", "local store to upload (default $XDG_DATA_HOME/perflab/perflab.db)")
	return cmd
}

func runPush(cmd *cobra.Command, e *env, out *outputFlags, db, from string) error {
	if db == "" {
		return clierr.Usagef("perflab runs push --db postgres://user@host/dbname", "runs push needs --db naming the store to upload into")
	}
	if db == from {
		return clierr.Usagef("name another store with --from or --db", "--from and --db are the same store")
	}
	dst, err := openStore(db)
	if err != nil {
		return err
	}
	defer dst.Close()
	src, err := openStoreReadOnly(from)
	if err != nil {
		return err
	}
	defer src.Close()
	res, err := store.Push(cmd.Context(), dst, src, pushProgress(e.stderr))
	if err != nil {
		return clierr.Runtimef("the runs pushed so far are stored; run the same push again to continue", "%v (%d runs pushed)", err, res.Added)
	}
	return writeResult(out, e.stdout, &report.Push{From: src.Path, To: dst.Path, PushResult: res})
}

// pushProgress reports every 50 runs on a terminal.
func pushProgress(w io.Writer) func(done, total int) {
	if !termfmt.IsTTY(w) {
		return nil
	}
	return func(done, total int) {
		if done%50 == 0 || done == total {
			fmt.Fprintf(w, "\rpushing runs: %d/%d", done, total)
			if done == total {
				fmt.Fprintln(w)
			}
		}
	}
}
