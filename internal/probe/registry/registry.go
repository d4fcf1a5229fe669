// Package registry resolves a probe name to a probe, whatever kind it is:
// a builtin probe (cpu, net.tcp …), a tool adapter (sysbench.cpu,
// wrk.nginx …), a probe named in the user's probes file (perflab.yaml), or
// a probe named by its definition, "exec:CMD", "http://URL" and
// "https://URL" (package own). Every command that takes a probe name —
// bench, check --probe, tune apply --measure, tune search --measure,
// bisect — resolves it here, so each takes all of them.
package registry

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/perflab/perflab/internal/bench"
	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
	"github.com/perflab/perflab/internal/probe/builtin"
	"github.com/perflab/perflab/internal/probe/own"
	"github.com/perflab/perflab/internal/probe/tools"
)

// DefaultFile is the probes file read from the working directory when no
// --probes is given and it exists.
const DefaultFile = "perflab.yaml"

// Open returns the catalog of every probe: builtin, tool adapters, the
// named probes of file, and exec:/http: names. file "" reads ./perflab.yaml
// if there is one; a named file that is missing or wrong is a usage error
// (exit 2) with one line per mistake.
func Open(file string) (*bench.Catalog, error) {
	named, err := LoadFile(file)
	if err != nil {
		return nil, err
	}
	return New(named...), nil
}

// New is the catalog of the builtin probes, the tool adapters and the
// given named probes, with exec:/http: names resolved on demand.
func New(named ...probe.Probe) *bench.Catalog {
	all := append(builtin.All(), tools.All()...)
	c := bench.NewCatalog(append(all, named...)...)
	c.SetAdHoc(func(name string) (probe.Probe, bool, error) {
		if !own.IsAdHoc(name) {
			return nil, false, nil
		}
		p, err := own.AdHoc(name)
		return p, true, err
	})
	return c
}

// LoadFile reads the named probes of a probes file ("" = ./perflab.yaml
// when present) and checks that none takes the name of a builtin probe,
// a tool adapter or a suite.
func LoadFile(file string) ([]probe.Probe, error) {
	explicit := file != ""
	if !explicit {
		file = DefaultFile
	}
	data, err := os.ReadFile(file)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, clierr.Usagef("give --probes an existing file", "probes file: %v", err)
	}
	named, err := own.Load(file, data)
	if err != nil {
		return nil, clierr.Usagef("", "%s", err.Error())
	}
	base := bench.NewCatalog(append(builtin.All(), tools.All()...)...)
	var clash []string
	for _, p := range named {
		if _, ok := base.Probe(p.Name()); ok {
			clash = append(clash, file+": probe "+p.Name()+": the name is a builtin probe's; pick another")
		}
		if _, ok := bench.SuiteByName(p.Name()); ok {
			clash = append(clash, file+": probe "+p.Name()+": the name is a suite's; pick another")
		}
	}
	if len(clash) > 0 {
		return nil, clierr.Usagef("", "%s", strings.Join(clash, "\n"))
	}
	return named, nil
}
