package search

import (
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/perflab/perflab/internal/bench"
)

// Validate checks the options as given (before defaults): the typed
// bench.OptionError names the field, cli words it as a flag.
func (o Options) Validate() error {
	switch {
	case o.Blocks < 3:
		return &bench.OptionError{Field: "Blocks", Value: o.Blocks, Reason: "is below 3: a screening step's interval needs two degrees of freedom", Hint: "e.g. 4"}
	case o.Confirm < 3:
		return &bench.OptionError{Field: "Confirm", Value: o.Confirm, Reason: "is below 3: a confirmation needs at least two degrees of freedom", Hint: "e.g. 6"}
	case o.Blocks > bench.MaxRepeat || o.Confirm > bench.MaxRepeat:
		return &bench.OptionError{Field: "Blocks", Value: max(o.Blocks, o.Confirm), Reason: "is above the harness's limit", Hint: "e.g. 4 and 6"}
	case o.MaxBlocks != 0 && (o.MaxBlocks < o.Blocks || o.MaxBlocks > bench.MaxRepeat):
		return &bench.OptionError{Field: "MaxBlocks", Value: o.MaxBlocks, Reason: "is below the screening's blocks or above the harness's limit", Hint: "e.g. 12, or --blocks to never extend"}
	case o.MinGain <= 0 || o.MinGain >= 1:
		return &bench.OptionError{Field: "MinGain", Value: o.MinGain * 100, Reason: "is not a percentage in (0, 100)", Hint: "e.g. 2"}
	case o.Budget < 0:
		return &bench.OptionError{Field: "Budget", Value: o.Budget, Reason: "is negative", Hint: "e.g. 30m, or 0 for one pass"}
	}
	return nil
}

// SearchPlan is --dry-run: the space in search order and what a pass
// costs in runs.
type SearchPlan struct {
	Knobs    []Knob   `json:"knobs"`
	Excluded []string `json:"excluded"`
	// ScreenRuns is one pass of the screening: Blocks × (values + 1)
	// runs per knob and per group tried together; ConfirmRuns the confirmation of a winner of one knob
	// (Confirm × 2) and of every knob (Confirm × (2 + knobs)).
	ScreenRuns     int           `json:"screen_runs"`
	ConfirmRunsMin int           `json:"confirm_runs_min"`
	ConfirmRunsMax int           `json:"confirm_runs_max"`
	Budget         time.Duration `json:"budget_ns"`
}

// Plan returns the dry-run plan.
func Plan(o Options) SearchPlan {
	p := SearchPlan{Knobs: o.Knobs, Excluded: o.Excluded, Budget: o.Budget}
	if p.Knobs == nil {
		p.Knobs = []Knob{}
	}
	if p.Excluded == nil {
		p.Excluded = []string{}
	}
	for _, k := range o.Knobs {
		p.ScreenRuns += o.Blocks * (len(k.Ladder) + 1)
	}
	for _, g := range groups(o.Knobs) {
		n := len(g[0].Ladder)
		for _, k := range g {
			n = min(n, len(k.Ladder))
		}
		p.ScreenRuns += o.Blocks * (n + 1)
	}
	p.ConfirmRunsMin = o.Confirm * 2
	p.ConfirmRunsMax = o.Confirm * (2 + len(o.Knobs))
	return p
}

// OutsideHostNetNS reports whether perflab runs in a network namespace
// other than PID 1's (a container, ip netns exec): host-wide knobs are
// then not the target's to change.
func OutsideHostNetNS() bool {
	ino := func(p string) uint64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return st.Ino
		}
		return 0
	}
	self, init := ino("/proc/self/ns/net"), ino("/proc/1/ns/net")
	if init == 0 {
		// PID 1's namespaces may be closed to us (a supervisor's
		// sandbox); kthreadd, PID 2 in the host's PID namespace, is
		// always in the host's network namespace.
		if b, err := os.ReadFile("/proc/2/comm"); err == nil && strings.TrimSpace(string(b)) == "kthreadd" {
			init = ino("/proc/2/ns/net")
		}
	}
	return self != 0 && init != 0 && self != init
}
