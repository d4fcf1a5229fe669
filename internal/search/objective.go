package search

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/run"
)

// Objective is what the search improves: one metric in a direction,
// subject to bounds on others (maximise requests/s subject to p99 ≤ X).
type Objective struct {
	Metric string `json:"metric"` // "" is the probe's first metric
	// Better is the direction to move Metric; "" is the metric's own.
	Better      run.Better   `json:"better,omitempty"`
	Constraints []Constraint `json:"constraints,omitempty"`
}

// Constraint bounds a metric, in the unit the probe reports it.
type Constraint struct {
	Metric string  `json:"metric"`
	Op     string  `json:"op"` // "<=" or ">="
	Bound  float64 `json:"bound"`
}

// Holds reports whether v meets the bound.
func (c Constraint) Holds(v float64) bool {
	if c.Op == "<=" {
		return v <= c.Bound
	}
	return v >= c.Bound
}

func (c Constraint) String() string {
	return c.Metric + " " + c.Op + " " + strconv.FormatFloat(c.Bound, 'g', -1, 64)
}

// ParseObjective reads --objective: METRIC, max:METRIC or min:METRIC,
// then optional constraints after commas: "max:rps,p99<=5" (p99 at most 5
// in its unit), "min:p99,rps>=20000".
func ParseObjective(s string) (Objective, error) {
	var o Objective
	parts := strings.Split(s, ",")
	head := strings.TrimSpace(parts[0])
	switch {
	case strings.HasPrefix(head, "max:"):
		o.Better, head = run.Higher, head[4:]
	case strings.HasPrefix(head, "min:"):
		o.Better, head = run.Lower, head[4:]
	}
	if strings.ContainsAny(head, "<>=: ") {
		return o, fmt.Errorf("--objective %q: start with the metric to improve, e.g. max:bandwidth,latency<=50", s)
	}
	o.Metric = head
	for _, p := range parts[1:] {
		c, err := ParseConstraint(p)
		if err != nil {
			return o, fmt.Errorf("--objective %q: %v", s, err)
		}
		o.Constraints = append(o.Constraints, c)
	}
	return o, nil
}

// ParseConstraint reads METRIC<=N or METRIC>=N.
func ParseConstraint(s string) (Constraint, error) {
	s = strings.TrimSpace(s)
	for _, op := range []string{"<=", ">="} {
		m, v, ok := strings.Cut(s, op)
		if !ok {
			continue
		}
		m = strings.TrimSpace(m)
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if m == "" || err != nil {
			break
		}
		return Constraint{Metric: m, Op: op, Bound: f}, nil
	}
	return Constraint{}, fmt.Errorf("constraint %q: want METRIC<=NUMBER or METRIC>=NUMBER in the metric's unit, e.g. latency<=50", s)
}

func (o Objective) String() string {
	var b strings.Builder
	if o.Better == run.Lower {
		b.WriteString("minimise ")
	} else {
		b.WriteString("maximise ")
	}
	b.WriteString(o.Metric)
	for i, c := range o.Constraints {
		if i == 0 {
			b.WriteString(" subject to ")
		} else {
			b.WriteString(" and ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}
