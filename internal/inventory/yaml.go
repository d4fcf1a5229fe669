package inventory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/relex/aini"
	"gopkg.in/yaml.v3"
)

var yamlKeyLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+:\s*(#.*)?$`) })

// isYAML decides the format: by extension, else by the first line that is
// not blank or a comment ("[group]" or "host var=1" is INI, "all:" YAML).
func isYAML(path string, b []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yml", ".yaml":
		return true
	case ".ini", ".cfg":
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		return line == "---" || yamlKeyLine().MatchString(line)
	}
	return false
}

// yamlGroup is one group of a YAML inventory.
type yamlGroup struct {
	Hosts    map[string]map[string]any `yaml:"hosts"`
	Vars     map[string]any            `yaml:"vars"`
	Children map[string]*yamlGroup     `yaml:"children"`
}

// parseYAML decodes a YAML inventory into aini's model and lets aini link
// groups, hosts and inherited variables.
func parseYAML(b []byte) (*aini.InventoryData, error) {
	var top map[string]*yamlGroup
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true) // a misspelt "host:" or "child:" is an error, not an empty group
	if err := dec.Decode(&top); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("YAML: %v", err)
	}
	if len(top) == 0 {
		return nil, fmt.Errorf("YAML: no groups (an inventory starts with all: or a group name)")
	}
	data := &aini.InventoryData{Groups: map[string]*aini.Group{}, Hosts: map[string]*aini.Host{}}
	for name, g := range top {
		if err := addYAMLGroup(data, name, g, nil, 0); err != nil {
			return nil, err
		}
	}
	// Hosts listed directly under all are "ungrouped", as in Ansible.
	for _, h := range data.Hosts {
		if len(h.DirectGroups) == 1 && h.DirectGroups["all"] != nil {
			h.DirectGroups = map[string]*aini.Group{"ungrouped": group(data, "ungrouped")}
		}
	}
	data.Reconcile()
	return data, nil
}

// maxDepth bounds group nesting, so a hostile file cannot recurse deeply.
const maxDepth = 64

func addYAMLGroup(data *aini.InventoryData, name string, g *yamlGroup, parent *aini.Group, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("YAML: groups nested more than %d deep", maxDepth)
	}
	if err := checkName("group", name); err != nil {
		return err
	}
	ag := group(data, name)
	if parent != nil && parent.Name != name {
		ag.DirectParents[parent.Name] = parent
	}
	if g == nil {
		return nil
	}
	if err := setVars(ag.InventoryVars, g.Vars, "group "+name); err != nil {
		return err
	}
	for pattern, vars := range g.Hosts {
		if err := addYAMLHosts(data, ag, pattern, vars); err != nil {
			return err
		}
	}
	for child, cg := range g.Children {
		if err := addYAMLGroup(data, child, cg, ag, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func addYAMLHosts(data *aini.InventoryData, g *aini.Group, pattern string, vars map[string]any) error {
	names, err := expandRange(pattern)
	if err != nil {
		return fmt.Errorf("YAML: host %q: %v", pattern, err)
	}
	for _, n := range names {
		if err := checkName("host", n); err != nil {
			return err
		}
		h := data.Hosts[n]
		if h == nil {
			h = &aini.Host{Name: n, Groups: map[string]*aini.Group{}, Vars: map[string]string{},
				DirectGroups: map[string]*aini.Group{}, InventoryVars: map[string]string{}, FileVars: map[string]string{}}
			data.Hosts[n] = h
		}
		h.DirectGroups[g.Name] = g
		if err := setVars(h.InventoryVars, vars, "host "+n); err != nil {
			return err
		}
	}
	return nil
}

func group(data *aini.InventoryData, name string) *aini.Group {
	if g := data.Groups[name]; g != nil {
		return g
	}
	g := &aini.Group{Name: name, Vars: map[string]string{}, Hosts: map[string]*aini.Host{},
		Children: map[string]*aini.Group{}, Parents: map[string]*aini.Group{},
		DirectParents: map[string]*aini.Group{}, InventoryVars: map[string]string{}, FileVars: map[string]string{}}
	data.Groups[name] = g
	return g
}

func checkName(what, name string) error {
	if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\n:,!&") {
		return fmt.Errorf("YAML: %s name %q is empty or contains a space or one of : , ! & (which host patterns use)", what, name)
	}
	return nil
}

// setVars stores YAML values as strings the way aini does for group_vars:
// scalars as written, lists and maps as JSON.
func setVars(to map[string]string, from map[string]any, where string) error {
	for k, v := range from {
		switch v := v.(type) {
		case nil:
			to[k] = ""
		case string:
			to[k] = v
		case int, int64, uint64, float64, bool:
			to[k] = fmt.Sprint(v)
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("YAML: %s: variable %s: %v", where, k, err)
			}
			to[k] = string(j)
		}
	}
	return nil
}

var rangeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([^\]:]*):([^\]:]*)(?::([^\]]*))?\]`) })

// maxRange bounds how many hosts one range may name.
const maxRange = 100000

// expandRange expands Ansible's host ranges, web[01:03] or db-[a:c] (with
// an optional stride, [1:9:2]); the bounds are inclusive and a leading zero
// sets the width.
func expandRange(pattern string) ([]string, error) {
	m := rangeRe().FindStringSubmatchIndex(pattern)
	if m == nil {
		return []string{pattern}, nil
	}
	head, tail := pattern[:m[0]], pattern[m[1]:]
	lo, hi := pattern[m[2]:m[3]], pattern[m[4]:m[5]]
	stride := 1
	if m[6] >= 0 {
		s, err := strconv.Atoi(pattern[m[6]:m[7]])
		if err != nil || s < 1 {
			return nil, fmt.Errorf("range stride %q is not a positive number", pattern[m[6]:m[7]])
		}
		stride = s
	}
	items, err := rangeItems(lo, hi, stride)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range items {
		rest, err := expandRange(tail)
		if err != nil {
			return nil, err
		}
		for _, r := range rest {
			out = append(out, head+it+r)
			if len(out) > maxRange {
				return nil, fmt.Errorf("range names more than %d hosts", maxRange)
			}
		}
	}
	return out, nil
}

func rangeItems(lo, hi string, stride int) ([]string, error) {
	if len(lo) == 1 && len(hi) == 1 && isLetter(lo[0]) && isLetter(hi[0]) {
		if lo > hi {
			return nil, fmt.Errorf("range [%s:%s] runs backwards", lo, hi)
		}
		var out []string
		for c := lo[0]; c <= hi[0]; c += byte(stride) {
			out = append(out, string(c))
			if int(c)+stride > 255 {
				break
			}
		}
		return out, nil
	}
	if lo == "" {
		lo = "0"
	}
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if errA != nil || errB != nil || a < 0 || b < a {
		return nil, fmt.Errorf("range [%s:%s] is not two increasing numbers or two letters", lo, hi)
	}
	if (b-a)/stride >= maxRange {
		return nil, fmt.Errorf("range names more than %d hosts", maxRange)
	}
	width := 0
	if len(lo) > 1 && lo[0] == '0' {
		width = len(lo)
	}
	var out []string
	for i := a; i <= b; i += stride {
		out = append(out, fmt.Sprintf("%0*d", width, i))
	}
	return out, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

var iniSection = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[([^:\]\s]+)(?::(\w+))?\]`) })

// checkINIRanges refuses host ranges aini would expand without bound (or
// loop on: a zero or negative stride) before aini sees them. Ranges are
// checked by expandRange's rules, which also cap how many hosts one line
// may name.
func checkINIRanges(b []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	hosts := true
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if m := iniSection().FindStringSubmatch(line); m != nil {
			hosts = m[2] == "" || m[2] == "hosts"
			continue
		}
		if !hosts || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		first := strings.Fields(line)[0]
		if i := strings.LastIndex(first, ":"); i > strings.LastIndex(first, "]") {
			first = first[:i] // host:port
		}
		if _, err := expandRange(first); err != nil {
			return fmt.Errorf("INI: line %d: %q: %v", n, first, err)
		}
	}
	return sc.Err()
}
