package run

import "time"

// Listing is one run as 'perflab runs list --format json' lists it: what
// identifies it, without its samples.
type Listing struct {
	ID       string    `json:"id"`
	Started  time.Time `json:"started"`
	Label    string    `json:"label,omitempty"`
	Suite    string    `json:"suite,omitempty"`
	Probe    string    `json:"probe"`
	Host     string    `json:"host"`
	Samples  int       `json:"samples"` // measured iterations
	Complete bool      `json:"complete"`
	Stop     Stop      `json:"stop"`
}

// Listing returns the run's list entry.
func (r *Run) Listing() Listing {
	return Listing{r.ID, r.Started, r.Label, r.Suite, r.Probe, r.Host, r.Iterations(), r.Complete, r.Stop}
}

// Iterations is how many measured iterations the run has (the samples of
// its first metric).
func (r *Run) Iterations() int {
	if len(r.Metrics) == 0 {
		return 0
	}
	return len(r.Values(r.Metrics[0].Name))
}
