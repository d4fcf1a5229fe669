// Package inventory reads Ansible inventories, so operators can point
// perflab at the fleet they already describe for Ansible, and resolves
// Ansible host patterns against them to the hosts to reach over SSH.
//
// # Formats
//
// INI inventories are parsed by github.com/relex/aini (the Go parser other
// tools use, packaged by Debian; it follows Ansible's INI parser: [group],
// [group:children], [group:vars], host ranges such as web[01:20] and
// key=value host variables with shell quoting). aini does not read YAML
// inventories, and the one Go library that does (go-ansible/inventory) is
// a few weeks old with no users yet, so YAML inventories (all: / hosts: /
// children: / vars:) are decoded here with gopkg.in/yaml.v3 into aini's
// data model. Both formats then share aini's variable handling:
// group_vars/ and host_vars/ next to the inventory file (NAME.yml,
// NAME.yaml or a NAME/ directory of them), with Ansible's precedence —
// inventory group variables, then group_vars files, then inventory host
// variables, then host_vars files, a child group's over its parent's.
// Variable values are strings; YAML lists and maps become JSON.
//
// # Connection facts
//
// Resolve turns a pattern into Hosts with what an SSH client needs:
// ansible_host (or the inventory name), ansible_user, ansible_port (or the
// port written as host:port in INI; 22 by default), and
// ansible_ssh_private_key_file (~ expanded). The ansible_ssh_host,
// ansible_ssh_user and ansible_ssh_port spellings of older Ansible are
// read when the new ones are absent. Jinja templates in values are not
// evaluated: a value containing {{ is refused with the host and variable
// named, rather than used as a literal address.
//
// # Patterns
//
// Pattern follows Ansible's host patterns: terms separated by ':' (or by
// ',' when the pattern contains one); a term is a host name, a group name,
// all or *, a shell glob over host and group names (web*.example.com), or
// a regular expression after ~ (~(web|db)\d+). A term prefixed with &
// intersects and one prefixed with ! excludes. As in Ansible, the terms
// are applied in the order: every plain term (union), then every &, then
// every !, whatever order they are written in; a pattern of only & and !
// terms starts from all. Two deliberate differences: a term that matches
// nothing is an error (Ansible warns and goes on, but a mistyped
// "all:!prod-db" would then run on the production databases), and
// subscripts (web[0:2]) are not supported. Hosts are returned sorted by
// name.
package inventory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/relex/aini"
)

// ErrInventory wraps every error about the inventory file or its
// variables, ErrPattern every error about a pattern.
var (
	ErrInventory = errors.New("inventory")
	ErrPattern   = errors.New("host pattern")
)

// Inventory is a parsed inventory with its variables.
type Inventory struct {
	Path string
	data *aini.InventoryData
}

// Host is one resolved host.
type Host struct {
	Name    string            `json:"name"`               // the inventory name, used to attribute results
	Address string            `json:"address"`            // ansible_host, or Name
	User    string            `json:"user,omitempty"`     // ansible_user; "" for the SSH client's default
	Port    int               `json:"port"`               // ansible_port, or 22
	KeyFile string            `json:"key_file,omitempty"` // ansible_ssh_private_key_file
	// Connection is ansible_connection: "ssh" (also for Ansible's smart and
	// paramiko), "local" (run on this machine, in-process, no SSH), or
	// another plugin's name, which perflab cannot use and says so.
	Connection string `json:"connection"`
	// Become is ansible_become: the host expects privilege escalation.
	Become bool `json:"become,omitempty"`
	Groups  []string          `json:"groups"`             // every group the host is in, sorted, without all
	Vars    map[string]string `json:"-"`                  // all its variables after precedence
}

// Load reads an INI or YAML inventory and the group_vars and host_vars
// directories beside it. The format is YAML for a .yml or .yaml file and
// for any file whose first meaningful line is a YAML mapping key such as
// "all:"; INI otherwise.
func Load(path string) (*Inventory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInventory, err)
	}
	var data *aini.InventoryData
	if isYAML(path, b) {
		data, err = parseYAML(b)
	} else {
		data, err = parseINI(b)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrInventory, path, err)
	}
	fixUngrouped(data)
	if err := addVarFiles(data, filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrInventory, path, err)
	}
	data.Reconcile()
	return &Inventory{Path: path, data: data}, nil
}

// parseINI runs aini's parser, which may panic on input it does not
// expect; that is reported as a parse error.
func parseINI(b []byte) (data *aini.InventoryData, err error) {
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("cannot parse as an INI inventory (%v)", r)
		}
	}()
	if err := checkINIRanges(b); err != nil {
		return nil, err
	}
	data, err = aini.ParseString(string(b))
	if err != nil {
		return nil, fmt.Errorf("INI: %w", err)
	}
	return data, nil
}

// HostNames lists every host, sorted.
func (inv *Inventory) HostNames() []string {
	names := make([]string, 0, len(inv.data.Hosts))
	for n := range inv.data.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// GroupNames lists every group, sorted, including all and ungrouped.
func (inv *Inventory) GroupNames() []string {
	seen := map[string]bool{}
	for _, g := range inv.data.Groups {
		seen[g.Name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resolve returns the hosts pattern selects, sorted by name, with their
// connection facts.
func (inv *Inventory) Resolve(pattern string) ([]Host, error) {
	p, err := ParsePattern(pattern)
	if err != nil {
		return nil, err
	}
	names, err := p.Select(inv)
	if err != nil {
		return nil, err
	}
	hosts := make([]Host, 0, len(names))
	for _, n := range names {
		h, err := inv.host(n)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrInventory, inv.Path, err)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

func (inv *Inventory) host(name string) (Host, error) {
	ah := inv.data.Hosts[name]
	h := Host{Name: name, Address: name, Port: 22, Vars: ah.Vars, Connection: "ssh"}
	if ah.Port > 0 {
		h.Port = ah.Port
	}
	for _, g := range ah.Groups {
		if g.Name != "all" {
			h.Groups = append(h.Groups, g.Name)
		}
	}
	sort.Strings(h.Groups)
	get := func(keys ...string) (string, error) {
		for _, k := range keys {
			if v, ok := ah.Vars[k]; ok {
				if strings.Contains(v, "{{") {
					return "", fmt.Errorf("host %s: %s is a Jinja template (%q), which perflab does not evaluate; give the value itself", name, k, v)
				}
				return v, nil
			}
		}
		return "", nil
	}
	var err error
	var addr, port string
	if addr, err = get("ansible_host", "ansible_ssh_host"); err != nil {
		return h, err
	}
	if addr != "" {
		h.Address = addr
	}
	if h.User, err = get("ansible_user", "ansible_ssh_user"); err != nil {
		return h, err
	}
	if port, err = get("ansible_port", "ansible_ssh_port"); err != nil {
		return h, err
	}
	if port != "" {
		n, perr := strconv.Atoi(port)
		if perr != nil || n < 1 || n > 65535 {
			return h, fmt.Errorf("host %s: ansible_port %q is not a port number", name, port)
		}
		h.Port = n
	}
	if h.KeyFile, err = get("ansible_ssh_private_key_file", "ansible_private_key_file"); err != nil {
		return h, err
	}
	h.KeyFile = expandHome(h.KeyFile)
	conn, err := get("ansible_connection")
	if err != nil {
		return h, err
	}
	switch conn {
	case "", "ssh", "smart", "paramiko", "paramiko_ssh":
	default:
		h.Connection = conn
	}
	become, err := get("ansible_become")
	if err != nil {
		return h, err
	}
	h.Become = isTrue(become)
	return h, nil
}

// isTrue reads a boolean the way Ansible's INI and YAML values spell it.
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1", "y", "t":
		return true
	}
	return false
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}
