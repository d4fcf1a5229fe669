// Package factpath is the catalogue of snapshot fact paths, generated from
// the Go types in internal/snapshot by reflection, so a path is checked data
// rather than a bare string: the knowledge base, audit's missing-fact keys,
// the collectors' Unavailable keys and compare's diff paths are all tested
// against it, and a typo fails a test instead of looking like a gap. Each
// path also has a Kind (setting, identity, state, meta): what a difference
// in it can mean.
//
// Path syntax (the one compare.DiffSnapshots produces and the knowledge base
// matches): JSON field names joined by dots; an element of an array of
// objects is "[key]" (the element's name, mount point, number or id), "[*]"
// for any; a map key is one segment (services.irqbalance.running), except
// for maps of values, whose keys may themselves contain dots
// (sysctl.net.core.somaxconn, kernel.params.intel_idle.max_cstate). In a
// pattern, "*" is any one segment and "sched_*" any segment starting with
// "sched_". A pattern may name a whole subtree ("memory.thp").
package factpath

import (
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/snapshot"
)

// Field is one field of a snapshot struct, reached at Path.
type Field struct {
	Struct string       // Go struct type the field belongs to: "NIC"
	GoName string       // Go field name: "MTU"
	JSON   string       // JSON name: "mtu"
	Path   string       // catalogue path: "net.interfaces[*].mtu"
	Type   reflect.Type // Go type of the field
}

// Struct is one snapshot struct type and its fields, in declaration order.
type Struct struct {
	Name   string
	Path   string // the path it is first reached at ("" for Snapshot)
	Fields []Field
}

var timeType = reflect.TypeOf(time.Time{})

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// isStruct reports whether t is a snapshot struct with fields of its own
// (time.Time is a value).
func isStruct(t reflect.Type) bool {
	t = deref(t)
	return t.Kind() == reflect.Struct && t != timeType
}

// jsonName is the field's JSON key, "" when it is not serialised.
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// Structs walks the snapshot types breadth first from Snapshot, each struct
// once, at the path it is first reached: what docs/snapshot.md documents.
func Structs() []Struct {
	type item struct {
		t    reflect.Type
		path string
	}
	var out []Struct
	seen := map[reflect.Type]bool{}
	queue := []item{{reflect.TypeOf(snapshot.Snapshot{}), ""}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.t] {
			continue
		}
		seen[it.t] = true
		st := Struct{Name: it.t.Name(), Path: it.path}
		for i := 0; i < it.t.NumField(); i++ {
			f := it.t.Field(i)
			key := jsonName(f)
			if key == "" {
				continue
			}
			p := join(it.path, key)
			st.Fields = append(st.Fields, Field{Struct: st.Name, GoName: f.Name, JSON: key, Path: p, Type: f.Type})
			if child, at := structBelow(f.Type, p); child != nil {
				queue = append(queue, item{child, at})
			}
		}
		out = append(out, st)
	}
	return out
}

// structBelow returns the struct type reached through t (directly, as an
// array element or a map value) and the path it is reached at.
func structBelow(t reflect.Type, p string) (reflect.Type, string) {
	t = deref(t)
	switch t.Kind() {
	case reflect.Struct:
		if t != timeType {
			return t, p
		}
	case reflect.Slice, reflect.Array:
		if isStruct(t.Elem()) {
			return deref(t.Elem()), p + "[*]"
		}
	case reflect.Map:
		if isStruct(t.Elem()) {
			return deref(t.Elem()), p + ".*"
		}
	}
	return nil, ""
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// Paths lists every path of the catalogue: every snapshot field at every
// depth, with "[*]" for array elements and "*" for map keys (a map of
// values ends in ".*", which stands for keys of one or more segments), then
// the facts compare names besides the snapshot (run[*], monitor,
// hostnoise).
func Paths() []string {
	return append(SnapshotPaths(), extraPaths()...)
}

// SnapshotPaths is Paths without the non-snapshot roots.
func SnapshotPaths() []string {
	var out []string
	var walk func(t reflect.Type, p string, depth int)
	walk = func(t reflect.Type, p string, depth int) {
		if depth > 8 {
			return
		}
		t = deref(t)
		switch t.Kind() {
		case reflect.Struct:
			if t == timeType {
				return
			}
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				key := jsonName(f)
				if key == "" {
					continue
				}
				fp := join(p, key)
				out = append(out, fp)
				walk(f.Type, fp, depth+1)
			}
		case reflect.Slice, reflect.Array:
			if isStruct(t.Elem()) {
				walk(t.Elem(), p+"[*]", depth+1)
			}
		case reflect.Map:
			out = append(out, p+".*")
			if isStruct(t.Elem()) || deref(t.Elem()).Kind() == reflect.Map {
				walk(t.Elem(), p+".*", depth+1)
			}
		}
	}
	walk(reflect.TypeOf(snapshot.Snapshot{}), "", 0)
	return out
}

// Segments splits a path or pattern into segments: on dots outside
// brackets, with every bracketed array key (any key, "[*]" included)
// becoming the segment "[*]": "net.interfaces[eth0.100].mtu" → net,
// interfaces, [*], mtu.
func Segments(p string) []string {
	// Fast path: segments are substrings of p, not copies. Diffs and
	// knowledge matching call this for every leaf of two snapshots times
	// every pattern, which made it the largest cost of a snapshot diff.
	// A stray "]" or invalid UTF-8 takes the rune-by-rune path, which drops
	// the one and replaces the other.
	if !utf8.ValidString(p) {
		return segmentsSlow(p)
	}
	out := make([]string, 0, 8)
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '[':
			if depth == 0 && i > start {
				out = append(out, p[start:i])
			}
			depth++
		case c == ']':
			if depth == 0 {
				return segmentsSlow(p)
			}
			depth--
			if depth == 0 {
				out = append(out, "[*]")
				start = i + 1
			}
		case depth > 0:
		case c == '.':
			if i > start {
				out = append(out, p[start:i])
			}
			start = i + 1
		}
	}
	if depth == 0 && start < len(p) {
		out = append(out, p[start:])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func segmentsSlow(p string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range p {
		switch {
		case r == '[':
			if depth == 0 {
				flush()
			}
			depth++
		case r == ']':
			if depth > 0 {
				depth--
				if depth == 0 {
					out = append(out, "[*]")
				}
			}
		case depth > 0:
		case r == '.':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

// Check reports whether a path or pattern names a fact (or a subtree of
// facts) the snapshot types (or the run, monitor and hostnoise roots) have,
// and why not. Map keys are not checked
// (they are data: sysctl names, kernel parameters, service names), except
// that a key below a map of values may not be followed by anything the
// value type lacks.
func Check(pattern string) error {
	segs := Segments(pattern)
	if len(segs) == 0 {
		return fmt.Errorf("empty fact path")
	}
	if root, ok := extraRoots[segs[0]]; ok {
		return root(segs[1:])
	}
	return check(reflect.TypeOf(snapshot.Snapshot{}), segs, "")
}

func check(t reflect.Type, segs []string, at string) error {
	if len(segs) == 0 {
		return nil
	}
	t = deref(t)
	seg := segs[0]
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType {
			break
		}
		if seg == "*" { // any field: some field must have the rest below it
			var first error
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if key := jsonName(f); key != "" {
					err := check(f.Type, segs[1:], join(at, key))
					if err == nil {
						return nil
					}
					if first == nil {
						first = err
					}
				}
			}
			return first
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if key := jsonName(f); key != "" && key == seg {
				return check(f.Type, segs[1:], join(at, seg))
			}
		}
		return fmt.Errorf("%s has no field %q (fields: %s)", orRoot(at), seg, strings.Join(fieldNames(t), ", "))
	case reflect.Slice, reflect.Array:
		if !isStruct(t.Elem()) {
			return fmt.Errorf("%s is a list of values: nothing below it", at)
		}
		if seg != "[*]" {
			return fmt.Errorf("%s is a list: name an element as %s[*] or %s[key], not .%s", at, at, at, seg)
		}
		return check(t.Elem(), segs[1:], at+"[*]")
	case reflect.Map:
		if seg == "[*]" {
			return fmt.Errorf("%s is a map: name a key as %s.KEY, not [key]", at, at)
		}
		v := deref(t.Elem())
		if !isStruct(v) && v.Kind() != reflect.Map {
			return nil // a key of values, dots allowed: the rest is the key
		}
		return check(v, segs[1:], at+".*")
	}
	return fmt.Errorf("%s is a value: nothing below it (%q)", at, strings.Join(segs, "."))
}

// Sources are Unavailable keys that name a missing source rather than a
// fact: a root without proc/ or sys/ loses every fact read from it, and the
// collector records that once under "proc" or "sys".
var Sources = []string{"proc", "sys"}

// CheckUnavailable is Check for a key of Snapshot.Unavailable, which may
// also be one of Sources.
func CheckUnavailable(key string) error {
	for _, s := range Sources {
		if key == s {
			return nil
		}
	}
	return Check(key)
}

func orRoot(at string) string {
	if at == "" {
		return "the snapshot"
	}
	return at
}

func fieldNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k := jsonName(t.Field(i)); k != "" {
			out = append(out, k)
		}
	}
	return out
}
