package bench

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/probe"
)

// Availability is implemented by probes that depend on something the host
// may lack (a tool adapter's binary, a server): a suite then uses its
// fallback instead of recording a failed run. The error says what is
// missing ("sysbench not installed").
type Availability interface {
	Available() error
}

// Catalog is the set of probes this build has, by name.
type Catalog struct {
	byName map[string]probe.Probe
	order  []probe.Probe
	adhoc  AdHocFunc
}

// AdHocFunc builds a probe from a name that carries its own definition
// ("exec:CMD", "http://…"); ok is false for a name it does not handle.
type AdHocFunc func(name string) (p probe.Probe, ok bool, err error)

// SetAdHoc installs the builder of probes named by their definition.
func (c *Catalog) SetAdHoc(f AdHocFunc) { c.adhoc = f }

// Lookup returns the probe a single name stands for: a probe of the
// catalog or one built from its name ("exec:CMD", "http://…"). It is
// what takes one probe name (tune apply --measure, tune search).
func (c *Catalog) Lookup(name string) (probe.Probe, error) {
	if p, ok, err := c.adHoc(name); ok || err != nil {
		return p, err
	}
	if p, ok := c.byName[strings.TrimPrefix(strings.TrimSpace(name), "probe:")]; ok {
		return p, nil
	}
	return nil, clierr.Usagef("see 'perflab bench list' for probes; exec:CMD and http://URL name your own", "unknown probe %q%s", name, c.suggest(name))
}

func (c *Catalog) adHoc(arg string) (probe.Probe, bool, error) {
	if c.adhoc == nil {
		return nil, false, nil
	}
	p, ok, err := c.adhoc(strings.TrimSpace(arg))
	if err != nil {
		return nil, true, clierr.Usagef("see docs/probes.md", "probe %q: %v", arg, err)
	}
	return p, ok, nil
}

// NewCatalog makes a catalog; a later probe with a taken name is ignored.
func NewCatalog(probes ...probe.Probe) *Catalog {
	c := &Catalog{byName: map[string]probe.Probe{}}
	for _, p := range probes {
		if _, dup := c.byName[p.Name()]; dup {
			continue
		}
		c.byName[p.Name()] = p
		c.order = append(c.order, p)
	}
	return c
}

// Probe returns a probe by name.
func (c *Catalog) Probe(name string) (probe.Probe, bool) {
	p, ok := c.byName[name]
	return p, ok
}

// Probes lists the probes in catalog order.
func (c *Catalog) Probes() []probe.Probe { return c.order }

// Plan is what a bench command line resolves to.
type Plan struct {
	Items []Item
	Suite string   // the suite's name when the command line is exactly one suite
	Notes []string // suite entries skipped or replaced by a fallback, and why
}

// SetWhereKnown sets a parameter on every planned probe that has it (as
// --concurrency does for the server probes) and returns how many it set.
func (p *Plan) SetWhereKnown(key, value string) int {
	n := 0
	for i := range p.Items {
		if _, ok := p.Items[i].Probe.Defaults(false)[key]; ok {
			p.Items[i].Params[key] = value
			n++
		}
	}
	return n
}

// Resolve turns names (suites or probes; a suite wins where a name is both,
// and "probe:NAME" or "suite:NAME" says which is meant) and --param values
// into a plan. A param "key=value" applies to every
// probe that has the key, "probe:key=value" to one probe only; a key that no
// selected probe has is an error, not silently ignored. A probe named on
// its own whose tool is missing is an error (a suite falls back instead),
// and a probe planned twice with the same parameters runs once.
func (c *Catalog) Resolve(names []string, params []string) (*Plan, error) {
	if len(names) == 0 {
		return nil, clierr.Usagef("e.g. 'perflab bench quick'; see 'perflab bench list'", "name a suite or probe to run")
	}
	global, scoped, err := parseParams(params)
	if err != nil {
		return nil, err
	}
	plan := &Plan{}
	suites := 0
	for _, arg := range names {
		if p, ok, err := c.adHoc(arg); err != nil {
			return nil, err
		} else if ok {
			plan.Items = append(plan.Items, Item{Probe: p, Params: p.Defaults(false)})
			continue
		}
		kind, name, err := splitName(arg)
		if err != nil {
			return nil, err
		}
		if s, ok := SuiteByName(name); ok && kind != "probe" {
			suites++
			plan.Suite = s.Name
			for _, si := range s.Items {
				it, note, ok := c.suiteItem(si)
				if note != "" {
					plan.Notes = append(plan.Notes, note)
				}
				if ok {
					plan.Items = append(plan.Items, it)
				}
			}
			if n := PeerNote(s); n != "" {
				plan.Notes = append(plan.Notes, n)
			}
			continue
		}
		p, ok := c.byName[name]
		if kind == "suite" {
			hint := "see 'perflab bench list' for suites"
			if ok {
				hint = name + " is a probe: run it as probe:" + name
			}
			return nil, clierr.Usagef(hint, "unknown suite %q", name)
		}
		if !ok {
			return nil, clierr.Usagef("see 'perflab bench list' for suites and probes", "unknown suite or probe %q%s", name, c.suggest(name))
		}
		// Named on its own, a probe whose tool is missing is refused now:
		// run, it would only record a failed run (and store it).
		if err := available(p); err != nil {
			return nil, clierr.Runtimef(c.instead(name), "probe %s cannot run here: %v", name, err)
		}
		plan.Items = append(plan.Items, Item{Probe: p, Params: p.Defaults(false)})
	}
	// Only a lone suite names the runs: with extra probes or a second
	// suite, the runs are not that suite's and must not compare as such.
	if suites != 1 || len(names) != 1 {
		plan.Suite = ""
	}
	if len(plan.Items) == 0 {
		return nil, clierr.Runtimef("see 'perflab bench list'", "none of the probes of %s is available in this build", strings.Join(names, ", "))
	}
	if err := applyParams(plan.Items, global, scoped); err != nil {
		return nil, err
	}
	plan.dedupe()
	return plan, nil
}

// splitName reads one command-line name: "NAME", "probe:NAME" or
// "suite:NAME". Space around it is dropped (a shell variable with a
// trailing newline); space inside means several names in one argument.
func splitName(arg string) (kind, name string, err error) {
	name = strings.TrimSpace(arg)
	if name == "" {
		return "", "", clierr.Usagef("e.g. 'perflab bench quick'; see 'perflab bench list'", "empty suite or probe name")
	}
	if strings.ContainsFunc(name, unicode.IsSpace) {
		return "", "", clierr.Usagef("give each name as its own argument, e.g. perflab bench cpu disk", "bad name %q: names have no spaces", arg)
	}
	k, bare, qualified := strings.Cut(name, ":")
	if !qualified {
		return "", name, nil
	}
	switch {
	case k == "probe" || k == "suite":
	case strings.EqualFold(k, "probe") || strings.EqualFold(k, "suite"):
		return "", "", clierr.Usagef("qualifiers are lower case", "bad name %q; did you mean %s:%s?", arg, strings.ToLower(k), bare)
	default:
		return "", "", clierr.Usagef("e.g. probe:cpu or suite:cpu", "bad name %q: only probe: and suite: qualify a name", arg)
	}
	switch {
	case bare == "":
		return "", "", clierr.Usagef("e.g. "+k+":cpu", "bad name %q: no %s name after the colon", arg, k)
	case strings.Contains(bare, ":"):
		return "", "", clierr.Usagef("e.g. probe:cpu", "bad name %q: qualify a name once", arg)
	}
	return k, bare, nil
}

// instead is the hint for a probe that cannot run: the builtin probe that
// suites use in its place, if any.
func (c *Catalog) instead(name string) string {
	for _, s := range Suites {
		for _, si := range s.Items {
			if si.Probe == name && si.Fallback != "" {
				if _, ok := c.byName[si.Fallback]; ok {
					return "or run the builtin probe " + si.Fallback + " instead"
				}
			}
		}
	}
	return "see 'perflab bench list' for the builtin probes"
}

// dedupe drops an item that repeats an earlier one exactly (same probe,
// same parameters), as "cpu probe:syscall" does, since the cpu suite has
// syscall: the second run would measure the same thing again and be
// pooled with the first by compare anyway.
func (p *Plan) dedupe() {
	var kept []Item
	for _, it := range p.Items {
		dup := slices.ContainsFunc(kept, func(k Item) bool {
			return k.Probe.Name() == it.Probe.Name() && maps.Equal(k.Params, it.Params)
		})
		if dup {
			p.Notes = append(p.Notes, fmt.Sprintf("%s with %s is named twice; it runs once", it.Probe.Name(), it.Params))
			continue
		}
		kept = append(kept, it)
	}
	p.Items = kept
}

// suiteItem picks the probe for a suite entry: the preferred one when this
// build has it and it is usable, else the fallback, else nothing.
func (c *Catalog) suiteItem(si SuiteItem) (Item, string, bool) {
	why := ""
	if p, ok := c.byName[si.Probe]; ok {
		err := available(p)
		if err == nil {
			return Item{Probe: p, Params: p.Defaults(si.Quick).Merge(si.Params), Budget: si.Budget, MaxRuns: si.MaxRuns}, "", true
		}
		why = err.Error()
	} else {
		why = "no " + si.Probe + " probe in this build"
	}
	if si.Fallback == "" {
		return Item{}, "skipped " + si.Probe + " (" + si.Measures + "): " + why, false
	}
	fb, ok := c.byName[si.Fallback]
	if !ok {
		return Item{}, "skipped " + si.Probe + " (" + si.Measures + "): " + why + ", and no " + si.Fallback + " probe either", false
	}
	note := "builtin probe " + fb.Name() + " used instead of " + si.Probe + ": " + why
	return Item{Probe: fb, Params: fb.Defaults(si.Quick).Merge(si.FallbackParams), Budget: si.Budget, MaxRuns: si.MaxRuns, Notes: []string{note}}, note, true
}

func available(p probe.Probe) error {
	if a, ok := p.(Availability); ok {
		return a.Available()
	}
	return nil
}

// parseParams splits --param values into global and per-probe ones.
func parseParams(params []string) (probe.Params, map[string]probe.Params, error) {
	global := probe.Params{}
	scoped := map[string]probe.Params{}
	for _, kv := range params {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, nil, &OptionError{"Params", strconv.Quote(kv), "is not key=value or PROBE:key=value", "e.g. duration=5ms or syscall:duration=5ms"}
		}
		if pn, key, ok := strings.Cut(k, ":"); ok {
			if scoped[pn] == nil {
				scoped[pn] = probe.Params{}
			}
			scoped[pn][key] = v
			continue
		}
		global[k] = v
	}
	return global, scoped, nil
}

func applyParams(items []Item, global probe.Params, scoped map[string]probe.Params) error {
	used := map[string]bool{}
	present := map[string]bool{}
	for i := range items {
		p := items[i].Probe
		present[p.Name()] = true
		known := p.Defaults(false)
		over := probe.Params{}
		for k, v := range global {
			if _, ok := known[k]; ok {
				over[k] = v
				used[k] = true
			}
		}
		for k, v := range scoped[p.Name()] {
			over[k] = v // unknown keys are the probe's to reject, by name
		}
		items[i].Params = items[i].Params.Merge(over)
	}
	for k := range global {
		if !used[k] {
			return &OptionError{"Params", k, "is a parameter of none of the selected probes", "see 'perflab bench list' for each probe's parameters"}
		}
	}
	for pn := range scoped {
		if !present[pn] {
			return &OptionError{"Params", pn + ":…", "names a probe that is not being run", "use PROBE:key=value with a probe being run"}
		}
	}
	return nil
}

// suggest offers the closest names for a typo.
func (c *Catalog) suggest(name string) string {
	var cands []string
	for _, s := range Suites {
		cands = append(cands, s.Name)
	}
	for _, p := range c.order {
		cands = append(cands, p.Name())
	}
	var close []string
	for _, k := range cands {
		if strings.HasPrefix(k, name) || strings.HasPrefix(name, k) || clierr.EditDistance(k, name) <= 2 {
			close = append(close, k)
		}
	}
	sort.Strings(close)
	close = slices.Compact(close) // cpu and disk are both a suite and a probe
	if len(close) == 0 {
		return ""
	}
	if len(close) > 4 {
		close = close[:4]
	}
	return "; did you mean " + strings.Join(close, " or ") + "?"
}

// SetParam sets key to value on every planned item whose probe has that
// parameter (server and client placement of tool probes) and reports
// whether any has it.
func (p *Plan) SetParam(key, value string) bool {
	used := false
	for i := range p.Items {
		if _, ok := p.Items[i].Probe.Defaults(false)[key]; ok {
			p.Items[i].Params[key] = value
			used = true
		}
	}
	return used
}

// PeerNote says which of a suite's entries stand in on loopback for rows
// that the reference measured between two hosts ("" when none do).
// Running them against a second host (--peer) is the two-hosts issue's;
// until then the note keeps a loopback number from passing for a network
// one.
func PeerNote(s Suite) string {
	var names []string
	for _, it := range s.Items {
		if it.NeedsPeer {
			names = append(names, it.Probe)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "needs a second host: " + strings.Join(names, ", ") + " measure loopback here; the reference rows " +
		"(packet rate, bandwidth, one-way and ping latency) were measured between two hosts"
}
