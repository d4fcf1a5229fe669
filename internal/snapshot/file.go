package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNewerSchema is returned for a snapshot written by a newer perflab.
var ErrNewerSchema = errors.New("snapshot schema is newer than this perflab supports")

// Decode reads a snapshot from JSON, refusing newer schemas, unknown
// garbage and documents that are not snapshots at all.
func Decode(r io.Reader) (*Snapshot, error) {
	data, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		return nil, err
	}
	return Unmarshal(data)
}

// Unmarshal parses snapshot JSON; see Decode.
func Unmarshal(data []byte) (*Snapshot, error) {
	var probe struct {
		Schema *int   `json:"schema"`
		Kind   string `json:"kind"` // set by other perflab documents, never by a snapshot
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a perflab snapshot: %w", err)
	}
	if probe.Kind != "" {
		// A run export also has a "schema", and decoding it as a snapshot
		// would succeed with every fact empty.
		return nil, fmt.Errorf("not a perflab snapshot: it is a %q document", probe.Kind)
	}
	if probe.Schema == nil {
		return nil, errors.New("not a perflab snapshot: no \"schema\" field")
	}
	if *probe.Schema > Schema {
		return nil, fmt.Errorf("%w: file has schema %d, this perflab reads up to %d", ErrNewerSchema, *probe.Schema, Schema)
	}
	if *probe.Schema < 1 {
		return nil, fmt.Errorf("not a perflab snapshot: schema %d", *probe.Schema)
	}
	var s Snapshot
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("corrupt snapshot: %w", err)
	}
	if s.Unavailable == nil {
		s.Unavailable = map[string]string{}
	}
	if s.Sysctl == nil {
		s.Sysctl = map[string]string{}
	}
	return &s, nil
}

// ReadFile reads a snapshot file.
func ReadFile(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Encode writes the snapshot as indented JSON.
func (s *Snapshot) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// Missing returns why a fact is unavailable, or "" when it is present. A
// fact is also missing when any parent path is ("cpu" covers "cpu.governors",
// "net.interfaces" and "net.interfaces[eth0.100]" cover
// "net.interfaces[eth0.100].mtu").
func (s *Snapshot) Missing(fact string) string {
	for f := fact; f != ""; f = parentPath(f) {
		if r, ok := s.Unavailable[f]; ok {
			return r
		}
	}
	return ""
}

// parentPath drops a path's last segment: a field ("a.b" → "a") or an
// array key ("a[x.y]" → "a"), whose key may contain dots; "" at the root.
func parentPath(p string) string {
	depth := 0
	for i := len(p) - 1; i >= 0; i-- {
		switch p[i] {
		case ']':
			depth++
		case '[':
			depth--
			if depth == 0 {
				return p[:i]
			}
		case '.':
			if depth == 0 {
				return p[:i]
			}
		}
	}
	return ""
}

// ElemPath is the fact path of a field of one element of an array of
// objects: ElemPath("net.interfaces", "eth0", "mtu") is
// "net.interfaces[eth0].mtu", the form compare's diff and Missing use.
// field may be "" for the element itself.
func ElemPath(list, key, field string) string {
	if field == "" {
		return list + "[" + key + "]"
	}
	return list + "[" + key + "]." + field
}
