// Command perflab tells a Linux operator whether a host is as fast as it
// should be, and if not, why. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/perflab/perflab/internal/cli"
	"github.com/perflab/perflab/internal/snapshot"
)

// version is set with -ldflags "-X main.version=…"; otherwise taken from
// the module build information.
var version = ""

func main() {
	v := version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	cli.Version = v
	snapshot.Version = v
	// Ctrl-C and SIGTERM cancel the context: commands save partial work and
	// restore what they changed before exiting.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal asks for a clean stop; once it has, default handling
	// is restored so a second Ctrl-C or SIGTERM ends a command stuck in a
	// read that never returns (a FIFO in a --root tree, a hung NFS mount).
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
