// Command fleetgen fills a perflab store with a generated fleet made from
// real runs and snapshots (internal/store/fleetgen): N hosts × M runs,
// reproducible by --seed, loaded with COPY on PostgreSQL. It prints what
// it planted and how long the load took. bench/fleetstore.sh drives it.
//
//	go run ./bench/fleetgen --db 'postgres:///fleet?host=/tmp/x&user=perflab' --hosts 10000 --runs-per-host 100
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	_ "github.com/perflab/perflab/internal/fleet" // stores each snapshot's fact set, as perflab does
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/store"
	"github.com/perflab/perflab/internal/store/fleetgen"
)

func main() {
	var opt fleetgen.Options
	db := flag.String("db", "", "store to fill (postgres:// URL or SQLite path); it must hold no runs")
	flag.IntVar(&opt.Hosts, "hosts", 10000, "hosts")
	flag.IntVar(&opt.RunsPerHost, "runs-per-host", 100, "runs per host")
	flag.IntVar(&opt.Samples, "samples", 3, "iterations kept per run")
	flag.Uint64Var(&opt.Seed, "seed", 1, "seed: the same seed gives the same store")
	flag.StringVar(&opt.Repo, "repo", ".", "repository holding testdata/aa and testdata/roots")
	batch := flag.Int("batch", 200, "hosts per COPY transaction")
	resume := flag.Bool("resume", false, "continue an interrupted load (same options): skip the hosts already stored")
	migrate := flag.Bool("migrate", false, "only bring the store to this perflab's schema (back-filling what a migration adds) and print how long it took")
	flag.Parse()
	if *db == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "fleetgen: give --db (a postgres:// URL or SQLite path) and no arguments")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *migrate {
		t0 := time.Now()
		s, err := store.Open(*db)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetgen:", err)
			os.Exit(1)
		}
		s.Close()
		fmt.Printf("store at schema %d in %.1f s\n", store.SchemaVersion, time.Since(t0).Seconds())
		return
	}
	if err := gen(ctx, *db, opt, *batch, *resume); err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}

type chunk struct {
	runs  []*run.Run
	snaps []*snapshot.Snapshot
}

func gen(ctx context.Context, db string, opt fleetgen.Options, batch int, resume bool) error {
	t0 := time.Now()
	g, err := fleetgen.New(opt)
	if err != nil {
		return err
	}
	s, err := store.Open(db)
	if err != nil {
		return err
	}
	defer s.Close()
	first := 0
	v, err := s.FleetView(ctx)
	if err != nil {
		return err
	}
	hosts, err := v.FleetHosts(ctx, store.FleetFilter{})
	v.Close()
	switch {
	case err != nil:
		return err
	case len(hosts) > 0 && !resume:
		return fmt.Errorf("%s already holds runs; drop it first (bench/fleetstore.sh --clean) or give --resume", s.Path)
	case len(hosts) > 0:
		// Hosts are loaded in order, whole batches per transaction.
		first = len(hosts)
		if hosts[first-1].Name != fleetgen.Name(first-1) || first > opt.Hosts {
			return fmt.Errorf("%s holds other hosts than this generator's first %d; drop it first (bench/fleetstore.sh --clean)", s.Path, first)
		}
		fmt.Printf("resuming after %d hosts already stored\n", first)
	}
	p := g.Plan()
	fmt.Printf("planted: cpu.model=%q on %d hosts (memory.latency ×0.88 worse): %s\n", fleetgen.ModelB, len(p.ModelB), short(p.ModelB))
	fmt.Printf("planted: memory.thp.enabled=always on %d hosts (memory.pagefault ×0.7): %s\n", len(p.THPAlways), short(p.THPAlways))
	fmt.Printf("planted: cgroup.cpu_quota_us=50000 on %s (cpu ×0.5)\n", strings.Join(p.Quota, " "))
	fmt.Printf("planted: change point on %s at %s: kernel upgrade, syscall ×0.8\n", p.ChangePoint, p.ChangeAt.Format(time.RFC3339))
	chunks := make(chan chunk, 2)
	go func() {
		defer close(chunks)
		var c chunk
		for i := first; i < opt.Hosts; i++ {
			h := g.Host(i)
			c.runs = append(c.runs, h.Runs...)
			c.snaps = append(c.snaps, h.Snapshots...)
			if (i+1-first)%batch == 0 || i == opt.Hosts-1 {
				select {
				case chunks <- c:
				case <-ctx.Done():
					return
				}
				c = chunk{}
			}
		}
	}()
	runs, snaps := 0, 0
	for c := range chunks {
		if err := s.CopyRuns(ctx, c.runs, c.snaps); err != nil {
			return err
		}
		runs += len(c.runs)
		snaps += len(c.snaps)
		fmt.Fprintf(os.Stderr, "\rloaded %d runs, %d snapshots (%.0fs)", runs, snaps, time.Since(t0).Seconds())
	}
	fmt.Fprintln(os.Stderr)
	if err := ctx.Err(); err != nil {
		return err
	}
	fmt.Printf("loaded %d hosts, %d runs, %d snapshots into %s in %.1f s (seed %d)\n", opt.Hosts-first, runs, snaps, s.Path, time.Since(t0).Seconds(), opt.Seed)
	return nil
}

func short(xs []string) string {
	if len(xs) > 8 {
		return strings.Join(xs[:8], " ") + fmt.Sprintf(" … (%d more)", len(xs)-8)
	}
	return strings.Join(xs, " ")
}
