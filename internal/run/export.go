package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/snapshot"
)

// ExportKind marks a JSON document as a perflab run export, so that a
// snapshot or some other JSON file given to `runs import` is refused by name
// rather than imported as zero runs.
const ExportKind = "perflab-runs"

// ErrNewerSchema is returned for an export (or a run in it) written by a
// newer perflab.
var ErrNewerSchema = errors.New("run export schema is newer than this perflab supports")

// Export is a self-contained set of runs with the snapshots they refer to,
// as written by `perflab runs export` and read by `runs import` and
// `compare --file`. The format is documented in docs/formats.md.
type Export struct {
	Schema    int                           `json:"schema"`
	Runs      []*Run                        `json:"runs"`
	Snapshots map[string]*snapshot.Snapshot `json:"snapshots"` // by snapshot id
}

// exportDoc is the on-disk shape: Export plus the kind marker; snapshots are
// kept raw so each goes through snapshot.Unmarshal's own schema check.
type exportDoc struct {
	Kind      string                     `json:"kind"`
	Schema    int                        `json:"schema"`
	Runs      []*Run                     `json:"runs"`
	Snapshots map[string]json.RawMessage `json:"snapshots"`
}

// WriteExport writes e as indented JSON. Schema 0 is written as the current
// Schema; runs are written in the order given.
func WriteExport(w io.Writer, e Export) error {
	if e.Schema == 0 {
		e.Schema = Schema
	}
	doc := struct {
		Kind      string                        `json:"kind"`
		Schema    int                           `json:"schema"`
		Runs      []*Run                        `json:"runs"`
		Snapshots map[string]*snapshot.Snapshot `json:"snapshots"`
	}{ExportKind, e.Schema, e.Runs, e.Snapshots}
	if doc.Runs == nil {
		doc.Runs = []*Run{}
	}
	if doc.Snapshots == nil {
		doc.Snapshots = map[string]*snapshot.Snapshot{}
	}
	for _, r := range doc.Runs {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("cannot export run %s: %w", r.ID, err)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// ReadExport reads an export, refusing newer schemas, other JSON documents
// and runs that do not hold together (samples of undeclared metrics,
// non-finite values, missing ids), so that a corrupt file is rejected before
// anything is imported.
func ReadExport(r io.Reader) (*Export, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<30))
	if err != nil {
		return nil, err
	}
	var head struct {
		Kind   string `json:"kind"`
		Schema *int   `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a perflab run export: %w", err)
	}
	if head.Kind != ExportKind {
		if head.Kind == "" {
			return nil, errors.New("not a perflab run export: no \"kind\": \"" + ExportKind + "\" field")
		}
		return nil, fmt.Errorf("not a perflab run export: kind is %q, want %q", head.Kind, ExportKind)
	}
	if head.Schema == nil {
		return nil, errors.New("not a perflab run export: no \"schema\" field")
	}
	if *head.Schema > Schema {
		return nil, fmt.Errorf("%w: file has schema %d, this perflab reads up to %d", ErrNewerSchema, *head.Schema, Schema)
	}
	if *head.Schema < 1 {
		return nil, fmt.Errorf("not a perflab run export: schema %d", *head.Schema)
	}
	var doc exportDoc
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("corrupt run export: %w", err)
	}
	e := &Export{Schema: doc.Schema, Runs: doc.Runs, Snapshots: map[string]*snapshot.Snapshot{}}
	ids := map[string]bool{}
	for i, r := range doc.Runs {
		if r == nil {
			return nil, fmt.Errorf("corrupt run export: run %d is null", i)
		}
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("corrupt run export: run %d (%s): %w", i, r.ID, err)
		}
		if ids[r.ID] {
			return nil, fmt.Errorf("corrupt run export: run id %s appears twice", r.ID)
		}
		ids[r.ID] = true
	}
	keys := make([]string, 0, len(doc.Snapshots))
	for k := range doc.Snapshots {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, id := range keys {
		s, err := snapshot.Unmarshal(doc.Snapshots[id])
		if err != nil {
			return nil, fmt.Errorf("run export: snapshot %s: %w", id, err)
		}
		if s.ID != id {
			return nil, fmt.Errorf("corrupt run export: snapshot stored under %q has id %q", id, s.ID)
		}
		e.Snapshots[id] = s
	}
	return e, nil
}

// Length limits of a run's strings: a 100 MB label must not reach the
// store, whose every page would then carry it.
const (
	MaxID   = 128
	MaxName = 256
)

// Validate checks that a run holds together: an id and a probe, a schema
// this perflab reads, unique metrics, samples only of declared metrics and
// only finite values. The store and the export reader both call it, so a
// run that passes can be compared and rendered without further checks.
func (r *Run) Validate() error {
	switch {
	case r.ID == "":
		return errors.New("run has no id")
	case r.Probe == "":
		return errors.New("run has no probe")
	case r.Schema > Schema:
		return fmt.Errorf("%w: run has schema %d, this perflab reads up to %d", ErrNewerSchema, r.Schema, Schema)
	case r.Schema < 0:
		return fmt.Errorf("run has schema %d", r.Schema)
	}
	for _, f := range []struct {
		name, v string
		most    int
	}{{"id", r.ID, MaxID}, {"probe", r.Probe, MaxName}, {"label", r.Label, MaxName}, {"host", r.Host, MaxName}, {"suite", r.Suite, MaxName}, {"snapshot_id", r.SnapshotID, MaxID}} {
		if len(f.v) > f.most {
			return fmt.Errorf("%s: %d bytes, at most %d", f.name, len(f.v), f.most)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%s: not valid UTF-8", f.name)
		}
	}
	metrics := make(map[string]bool, len(r.Metrics))
	for _, m := range r.Metrics {
		if len(m.Name) > MaxName || len(m.Unit) > MaxName {
			return fmt.Errorf("metric %.40q: name or unit over %d bytes", m.Name, MaxName)
		}
		if m.Name == "" {
			return errors.New("a metric has no name")
		}
		if metrics[m.Name] {
			return fmt.Errorf("metric %q is declared twice", m.Name)
		}
		if m.Better != Higher && m.Better != Lower {
			return fmt.Errorf("metric %q: better is %q, want %q or %q", m.Name, m.Better, Higher, Lower)
		}
		metrics[m.Name] = true
	}
	type key struct {
		m string
		i int
	}
	seen := make(map[key]bool, len(r.Samples))
	for _, s := range r.Samples {
		if seen[key{s.Metric, s.Iteration}] {
			return fmt.Errorf("samples: metric %q iteration %d appears twice", s.Metric, s.Iteration)
		}
		seen[key{s.Metric, s.Iteration}] = true
		if !metrics[s.Metric] {
			return fmt.Errorf("sample of undeclared metric %q", s.Metric)
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			return fmt.Errorf("metric %q iteration %d: value is not a finite number", s.Metric, s.Iteration)
		}
		if s.Iteration < 0 {
			return fmt.Errorf("metric %q: negative iteration %d", s.Metric, s.Iteration)
		}
	}
	return nil
}
