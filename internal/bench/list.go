package bench

import "time"

// ListDoc is what 'perflab bench list' shows: the suites with their
// entries, and every probe of the catalog with its parameters.
type ListDoc struct {
	Suites []ListSuite
	Probes []ListProbe
}

// ListSuite is one suite of the list.
type ListSuite struct {
	Name, Doc string
	Items     []ListItem
	// Budget is the sum of the entries' budgets: the longest it takes.
	Budget time.Duration `json:"-"`
	// Runs names what each entry runs in this build: the probe, its
	// fallback "(for …)", or "(not in this build)".
	Runs []string `json:"-"`
}

// ListItem is one entry of a suite.
type ListItem struct {
	Probe, Fallback string
	Params          map[string]string `json:",omitempty"`
	Budget          string
	Measures        string
}

// ListProbe is one probe with its default and quick parameters.
type ListProbe struct {
	Name, Doc string
	Defaults  map[string]string
	Quick     map[string]string
}

// List describes the builtin suites and the catalog's probes.
func (c *Catalog) List() ListDoc {
	var doc ListDoc
	for _, s := range Suites {
		ls := ListSuite{Name: s.Name, Doc: s.Doc}
		for _, it := range s.Items {
			ls.Items = append(ls.Items, ListItem{it.Probe, it.Fallback, it.Params, it.Budget.String(), it.Measures})
			ls.Budget += it.Budget
			n := it.Probe
			if _, ok := c.Probe(it.Probe); !ok {
				if it.Fallback != "" {
					n = it.Fallback + " (for " + it.Probe + ")"
				} else {
					n = it.Probe + " (not in this build)"
				}
			}
			ls.Runs = append(ls.Runs, n)
		}
		doc.Suites = append(doc.Suites, ls)
	}
	for _, p := range c.Probes() {
		doc.Probes = append(doc.Probes, ListProbe{p.Name(), p.Doc(), p.Defaults(false), p.Defaults(true)})
	}
	return doc
}
