package audit

// RuleDoc is a rule as 'perflab rules --format json' prints it.
type RuleDoc struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Area      string   `json:"area"`
	Severity  string   `json:"severity"`
	Workloads []string `json:"workloads"` // empty: every workload
	Knob      string   `json:"knob"`
	Why       string   `json:"why"`
	Source    string   `json:"source"`
}

// Doc is the rule's description without its check.
func (r *Rule) Doc() RuleDoc {
	wl := r.Workloads
	if wl == nil {
		wl = []string{}
	}
	return RuleDoc{ID: r.ID, Title: r.Title, Area: r.Area, Severity: r.Severity.String(), Workloads: wl, Knob: r.Knob, Why: r.Why, Source: r.Source}
}

// WorkloadDoc is a built-in workload as 'perflab rules --workloads
// --format json' prints it.
type WorkloadDoc struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Targets     map[string]string `json:"targets"`
}

// WorkloadDocs describes every built-in workload.
func WorkloadDocs() ([]WorkloadDoc, error) {
	names := Workloads()
	docs := make([]WorkloadDoc, 0, len(names))
	for _, n := range names {
		wl, err := LookupWorkload(n)
		if err != nil {
			return nil, err
		}
		docs = append(docs, WorkloadDoc{n, wl.Description, wl.Targets})
	}
	return docs, nil
}
