package inventory

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/relex/aini"
	"gopkg.in/yaml.v3"
)

// varExts are the extensions Ansible's host_group_vars plugin reads (its
// default yaml_valid_extensions, plus no extension at all).
var varExts = map[string]bool{"": true, ".yml": true, ".yaml": true, ".json": true}

// addVarFiles reads group_vars/NAME and host_vars/NAME beside the inventory
// as Ansible's host_group_vars plugin does: for each group and host NAME,
// the file NAME, NAME.yml, NAME.yaml or NAME.json, or a directory NAME/
// whose files (recursively, sorted, hidden and backup files skipped) carry
// one of those extensions or none. aini's own loader reads only .yml and
// .yaml and matches names with their last dot cut off (a host_vars file
// for web1.example.com without an extension is read as "web1.example"), so
// perflab finds the files itself and hands the values to aini's
// precedence (data.Reconcile). A file that is not a YAML mapping is an
// error naming it: Ansible refuses it too.
func addVarFiles(data *aini.InventoryData, dir string) error {
	for _, g := range data.Groups {
		vars, err := varsFor(dir, "group_vars", g.Name)
		if err != nil {
			return err
		}
		addValues(g.FileVars, vars)
	}
	for _, h := range data.Hosts {
		vars, err := varsFor(dir, "host_vars", h.Name)
		if err != nil {
			return err
		}
		addValues(h.FileVars, vars)
	}
	return nil
}

func addValues(dst, src map[string]string) {
	for k, v := range src {
		dst[k] = v
	}
}

// varsFor merges every vars file of one group or host, in Ansible's order.
func varsFor(dir, sub, name string) (map[string]string, error) {
	var files []string
	base := filepath.Join(dir, sub, name)
	if st, err := os.Stat(base); err == nil && st.IsDir() {
		err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			n := d.Name()
			if p != base && (strings.HasPrefix(n, ".") || strings.HasSuffix(n, "~")) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && varExts[strings.ToLower(filepath.Ext(n))] {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
	} else {
		for _, ext := range []string{"", ".yml", ".yaml", ".json"} {
			if st, err := os.Stat(base + ext); err == nil && st.Mode().IsRegular() {
				files = append(files, base+ext)
			}
		}
	}
	out := map[string]string{}
	for _, f := range files {
		vars, err := readVarFile(f)
		if err != nil {
			rel, _ := filepath.Rel(dir, f)
			return nil, fmt.Errorf("%s: %v", rel, err)
		}
		addValues(out, vars)
	}
	return out, nil
}

// readVarFile decodes one vars file (YAML, of which JSON is a subset) into
// aini's string values: strings as they are, numbers and booleans printed,
// lists and maps as JSON.
func readVarFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a YAML mapping of variables: %v", err)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = v
		case bool:
			out[k] = strconv.FormatBool(v)
		case int, int64, uint64, float64:
			out[k] = fmt.Sprint(v)
		case nil:
			out[k] = ""
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("variable %s: %v", k, err)
			}
			out[k] = string(j)
		}
	}
	return out, nil
}

// fixUngrouped puts every host that belongs to no group but all into
// ungrouped, as Ansible does — aini leaves hosts declared under [all] out
// of it.
func fixUngrouped(data *aini.InventoryData) {
	var ungrouped *aini.Group
	for _, h := range data.Hosts {
		named := false
		for g := range h.DirectGroups {
			if g != "all" && g != "ungrouped" {
				named = true
			}
		}
		if named {
			delete(h.DirectGroups, "ungrouped")
			continue
		}
		if ungrouped == nil {
			ungrouped = data.Groups["ungrouped"]
			if ungrouped == nil {
				data.Reconcile() // creates all and ungrouped
				ungrouped = data.Groups["ungrouped"]
			}
		}
		h.DirectGroups["ungrouped"] = ungrouped
	}
}
