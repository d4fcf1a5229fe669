package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// TestAnsibleInventoryReference resolves every inventory this package
// keeps as a fixture, and every INI and YAML inventory of ansible-core's own
// integration tests (its PyPI sdist, fetched by scripts/refdata), with
// perflab and with `ansible-inventory --list` (the oracle), and compares
// for every group, all, ungrouped, an intersection and an exclusion: the
// selected hosts and each host's address, port, user and connection.
//
// An inventory ansible-inventory cannot read (dynamic scripts, plugins,
// TOML) is not perflab's either and is left out; one perflab refuses on
// purpose (a Jinja template where an address belongs) must be refused
// with a line naming the host and variable.
func TestAnsibleInventoryReference(t *testing.T) {
	bin := testenv.RequireTool(t, "ansible-inventory")
	files := inventoryCorpus(t)
	agree, total, compared := 0, 0, 0
	// ansible-inventory takes a second or more per call (Python start-up):
	// run them a few at a time.
	type result struct {
		out *ansibleOut
		err error
	}
	results := make([]chan result, len(files))
	sem := make(chan struct{}, 4)
	for i, f := range files {
		results[i] = make(chan result, 1)
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o, err := ansibleList(bin, f)
			results[i] <- result{o, err}
		}()
	}
	for i, f := range files {
		r := <-results[i]
		want, err := r.out, r.err
		if err != nil {
			t.Logf("%s: ansible-inventory cannot read it either (%v)", f, err)
			continue
		}
		inv, err := Load(f)
		if err != nil {
			if strings.Contains(err.Error(), "Jinja") {
				continue
			}
			t.Errorf("%s: perflab refuses an inventory Ansible reads: %v", f, err)
			continue
		}
		compared++
		for _, pattern := range want.patterns() {
			total++
			wantHosts := want.selection(pattern)
			got, err := inv.Resolve(pattern)
			if err != nil {
				if len(wantHosts) == 0 && errors.Is(err, ErrPattern) {
					agree++ // perflab refuses an empty selection on purpose
					continue
				}
				if strings.Contains(err.Error(), "Jinja") {
					agree++
					continue
				}
				t.Errorf("%s %q: perflab: %v; ansible: %v", f, pattern, err, wantHosts)
				continue
			}
			gotLines, wantLines := describe(got), want.describe(wantHosts)
			if strings.Join(gotLines, "\n") != strings.Join(wantLines, "\n") {
				t.Errorf("%s %q:\nperflab %v\nansible %v", f, pattern, gotLines, wantLines)
				continue
			}
			agree++
		}
	}
	if compared < 10 {
		t.Errorf("only %d inventories compared; the corpus is missing (scripts/refdata)", compared)
	}
	t.Logf("perflab agrees with ansible-inventory on %d of %d selections over %d inventories", agree, total, compared)
}

// inventoryCorpus lists this package's fixtures and ansible-core's test
// inventories.
func inventoryCorpus(t *testing.T) []string {
	files := []string{"testdata/ini/hosts", "testdata/yaml/inventory.yml"}
	extra, _ := filepath.Glob("testdata/real/*/*")
	for _, e := range extra {
		if st, err := os.Stat(e); err == nil && !st.IsDir() {
			files = append(files, e)
		}
	}
	base := os.Getenv("PERFLAB_REFDATA")
	if base == "" {
		base = "/var/cache/perflab/refdata"
	}
	dir := filepath.Join(base, "ansible-core")
	if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
		testenv.Unavailable(t, "ansible-core test inventories missing in %s (scripts/refdata)", dir)
	}
	_ = filepath.WalkDir(filepath.Join(dir, "test", "integration", "targets"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name := d.Name()
		ext := filepath.Ext(name)
		if !strings.HasPrefix(name, "inventory") || ext == ".sh" || ext == ".py" || ext == ".json" || ext == ".toml" || strings.Contains(name, "config") {
			return nil
		}
		files = append(files, p)
		return nil
	})
	sort.Strings(files)
	return files
}

// ansibleOut is `ansible-inventory --list`.
type ansibleOut struct {
	groups   map[string]ansibleGroup
	hostvars map[string]map[string]any
}

type ansibleGroup struct {
	Hosts    []string `json:"hosts"`
	Children []string `json:"children"`
}

func ansibleList(bin, file string) (*ansibleOut, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-i", file, "--list")
	cmd.Env = append(os.Environ(), "ANSIBLE_INVENTORY_UNPARSED_FAILED=true", "ANSIBLE_INVENTORY_ENABLED=ini,yaml",
		"ANSIBLE_LOCALHOST_WARNING=false", "ANSIBLE_INVENTORY_UNPARSED_WARNING=false", "ANSIBLE_NOCOLOR=1")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, err
	}
	o := &ansibleOut{groups: map[string]ansibleGroup{}}
	for k, v := range raw {
		if k == "_meta" {
			var m struct {
				Hostvars map[string]map[string]any `json:"hostvars"`
			}
			if err := json.Unmarshal(v, &m); err != nil {
				return nil, err
			}
			o.hostvars = m.Hostvars
			continue
		}
		var g ansibleGroup
		if err := json.Unmarshal(v, &g); err != nil {
			return nil, err
		}
		o.groups[k] = g
	}
	if len(o.hosts("all")) == 0 {
		return nil, fmt.Errorf("no hosts")
	}
	return o, nil
}

// hosts is every host of group g and its descendants.
func (o *ansibleOut) hosts(g string) map[string]bool {
	out := map[string]bool{}
	var walk func(string, map[string]bool)
	walk = func(g string, seen map[string]bool) {
		if seen[g] {
			return
		}
		seen[g] = true
		for _, h := range o.groups[g].Hosts {
			out[h] = true
		}
		for _, c := range o.groups[g].Children {
			walk(c, seen)
		}
	}
	walk(g, map[string]bool{})
	return out
}

// patterns: every group, plus an intersection and an exclusion of the two
// largest groups other than all.
func (o *ansibleOut) patterns() []string {
	var gs []string
	for g := range o.groups {
		gs = append(gs, g)
	}
	sort.Strings(gs)
	ps := append([]string{}, gs...)
	var named []string
	for _, g := range gs {
		if g != "all" && g != "ungrouped" && len(o.hosts(g)) > 0 {
			named = append(named, g)
		}
	}
	sort.SliceStable(named, func(i, j int) bool { return len(o.hosts(named[i])) > len(o.hosts(named[j])) })
	if len(named) >= 2 {
		ps = append(ps, named[0]+":&"+named[1], "all:!"+named[0], named[0]+":"+named[1])
	}
	return ps
}

// selection evaluates a pattern of the three shapes patterns makes.
func (o *ansibleOut) selection(p string) []string {
	set := map[string]bool{}
	switch {
	case strings.Contains(p, ":&"):
		a, b, _ := strings.Cut(p, ":&")
		hb := o.hosts(b)
		for h := range o.hosts(a) {
			if hb[h] {
				set[h] = true
			}
		}
	case strings.Contains(p, ":!"):
		a, b, _ := strings.Cut(p, ":!")
		hb := o.hosts(b)
		for h := range o.hosts(a) {
			if !hb[h] {
				set[h] = true
			}
		}
	case strings.Contains(p, ":"):
		a, b, _ := strings.Cut(p, ":")
		set = o.hosts(a)
		for h := range o.hosts(b) {
			set[h] = true
		}
	default:
		set = o.hosts(p)
	}
	hs := make([]string, 0, len(set))
	for h := range set {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	return hs
}

func (o *ansibleOut) describe(hosts []string) []string {
	var out []string
	for _, h := range hosts {
		v := o.hostvars[h]
		str := func(k, def string) string {
			if x, ok := v[k]; ok {
				switch x := x.(type) {
				case string:
					return x
				case float64:
					return strconv.FormatFloat(x, 'f', -1, 64)
				}
				return fmt.Sprint(x)
			}
			return def
		}
		addr := str("ansible_host", str("ansible_ssh_host", h))
		conn := str("ansible_connection", "ssh")
		if conn == "paramiko" || conn == "smart" {
			conn = "ssh"
		}
		out = append(out, fmt.Sprintf("%s addr=%s port=%s user=%s conn=%s", h, addr,
			str("ansible_port", str("ansible_ssh_port", "22")), str("ansible_user", str("ansible_ssh_user", "")), conn))
	}
	return out
}

func describe(hosts []Host) []string {
	var out []string
	for _, h := range hosts {
		out = append(out, fmt.Sprintf("%s addr=%s port=%d user=%s conn=%s", h.Name, h.Address, h.Port, h.User, h.Connection))
	}
	return out
}
