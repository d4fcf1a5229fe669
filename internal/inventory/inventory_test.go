package inventory

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func load(t *testing.T, path string) *Inventory {
	t.Helper()
	inv, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

var fleets = []string{"testdata/ini/hosts", "testdata/yaml/inventory.yml"}

func TestConnectionFacts(t *testing.T) {
	home, _ := os.UserHomeDir()
	key := filepath.Join(home, ".ssh/prod_ed25519")
	want := map[string]Host{
		"bastion":           {Name: "bastion", Address: "203.0.113.10", User: "ops", Port: 22, Groups: []string{"ungrouped"}},
		"web01.example.com": {Name: "web01.example.com", Address: "web01.example.com", User: "deploy", Port: 22, KeyFile: key, Groups: []string{"canary", "prod", "web"}},
		"web04.example.com": {Name: "web04.example.com", Address: "web04.example.com", User: "admin", Port: 2222, KeyFile: key, Groups: []string{"prod", "web"}},
		// group_vars/db overrides the inventory's prod:vars user.
		"db1.example.com": {Name: "db1.example.com", Address: "10.0.2.11", User: "dba", Port: 5522, KeyFile: key, Groups: []string{"db", "prod"}},
		// host_vars overrides the port.
		"db2.example.com": {Name: "db2.example.com", Address: "10.0.2.12", User: "dba", Port: 6622, KeyFile: key, Groups: []string{"canary", "db", "prod"}},
	}
	for _, f := range fleets {
		t.Run(filepath.Base(f), func(t *testing.T) {
			inv := load(t, f)
			hosts, err := inv.Resolve("all")
			if err != nil {
				t.Fatal(err)
			}
			if len(hosts) != 7 {
				t.Fatalf("%d hosts, want 7: %v", len(hosts), inv.HostNames())
			}
			for _, h := range hosts {
				w, ok := want[h.Name]
				if !ok {
					continue
				}
				w.Connection = "ssh"
				h.Vars = nil
				if !reflect.DeepEqual(h, w) {
					t.Errorf("%s:\n got %+v\nwant %+v", h.Name, h, w)
				}
			}
			db1 := mustHost(t, inv, "db1.example.com")
			if db1.Vars["postgres_version"] != "16" || db1.Vars["ntp_servers"] != `["0.pool.ntp.org","1.pool.ntp.org"]` {
				t.Errorf("group_vars not applied: %v", db1.Vars)
			}
		})
	}
}

func mustHost(t *testing.T, inv *Inventory, name string) Host {
	t.Helper()
	hs, err := inv.Resolve(name)
	if err != nil || len(hs) != 1 {
		t.Fatalf("%s: %v %v", name, hs, err)
	}
	return hs[0]
}

func TestPatterns(t *testing.T) {
	web := "web01.example.com web02.example.com web03.example.com web04.example.com"
	cases := []struct{ pattern, want string }{
		{"all", "bastion db1.example.com db2.example.com " + web},
		{"*", "bastion db1.example.com db2.example.com " + web},
		{"web", web},
		{"web02.example.com", "web02.example.com"},
		{"web:db", "db1.example.com db2.example.com " + web},
		{"web,db", "db1.example.com db2.example.com " + web},
		{"prod:&canary", "db2.example.com web01.example.com"},
		{"prod:!canary", "db1.example.com web02.example.com web03.example.com web04.example.com"},
		// Order of writing does not matter: ! applies after the union.
		{"!canary:prod", "db1.example.com web02.example.com web03.example.com web04.example.com"},
		{"!canary", "bastion db1.example.com web02.example.com web03.example.com web04.example.com"},
		{"&db", "db1.example.com db2.example.com"},
		{"web:db:&canary:!web", "db2.example.com"},
		{"ungrouped", "bastion"},
		{"web0[12]*", "web01.example.com web02.example.com"},
		{"*.example.com:!web", "db1.example.com db2.example.com"},
		{"~db\\d", "db1.example.com db2.example.com"},
		{"~(bastion|web04)", "bastion web04.example.com"},
		{"pro*", "db1.example.com db2.example.com " + web}, // glob over group names
		{" web : !canary ", "web02.example.com web03.example.com web04.example.com"},
	}
	for _, f := range fleets {
		inv := load(t, f)
		for _, c := range cases {
			hosts, err := inv.Resolve(c.pattern)
			if err != nil {
				t.Errorf("%s %q: %v", f, c.pattern, err)
				continue
			}
			var names []string
			for _, h := range hosts {
				names = append(names, h.Name)
			}
			if got := strings.Join(names, " "); got != c.want {
				t.Errorf("%s %q:\n got %s\nwant %s", f, c.pattern, got, c.want)
			}
		}
	}
}

func TestPatternErrors(t *testing.T) {
	inv := load(t, fleets[0])
	for _, c := range []struct{ pattern, want string }{
		{"", "empty"},
		{"web::db", "empty term"},
		{"web:!", "empty term"},
		{"nosuch", `"nosuch" matches no host or group`},
		{"all:!nosuch", `"nosuch" matches no host or group`},
		{"web[0]", "subscripts"},
		{"web[1:2]", "subscripts"},
		{"~(unclosed", "bad regular expression"},
		{"web[", "bad glob"},
	} {
		_, err := inv.Resolve(c.pattern)
		if !errors.Is(err, ErrPattern) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.pattern, err, c.want)
		}
	}
}

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInventoryErrors(t *testing.T) {
	for _, c := range []struct {
		name, file, body, extra, want string
	}{
		{"jinja", "hosts", "h1 ansible_host=\"{{ hostvars['x'].ip }}\"\n", "", "Jinja template"},
		{"bad port", "hosts", "h1 ansible_port=ssh\n", "", "not a port number"},
		{"bad section", "hosts", "[web group]\nh1\n", "", "INI"},
		{"yaml typo", "inv.yml", "all:\n  host:\n    h1:\n", "", "field host not found"},
		{"yaml empty", "inv.yml", "# nothing\n", "", "no groups"},
		{"yaml bad range", "inv.yml", "all:\n  hosts:\n    web[9:1]:\n", "", "not two increasing"},
		{"bad group_vars", "hosts", "h1\n", "group_vars/all.yml", "not a YAML mapping"},
		{"group_vars without extension", "hosts", "h1\n", "group_vars/all", "group_vars/all: not a YAML mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, c.file, c.body)
			if c.extra != "" {
				write(t, dir, c.extra, "- a list\n- not a mapping\n")
			}
			inv, err := Load(p)
			if err == nil {
				_, err = inv.Resolve("all")
			}
			if !errors.Is(err, ErrInventory) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrInventory) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFormatSniffing(t *testing.T) {
	dir := t.TempDir()
	// No extension: "all:" makes it YAML, "[web]" INI.
	y := load(t, write(t, dir, "a/inventory", "---\nall:\n  children:\n    web:\n      hosts:\n        w[a:c]:\n"))
	if got := strings.Join(y.HostNames(), " "); got != "wa wb wc" {
		t.Errorf("YAML without extension: %s", got)
	}
	i := load(t, write(t, dir, "b/inventory", "# fleet\n[web]\nw[1:5:2] ansible_user=x\n"))
	if got := strings.Join(i.HostNames(), " "); got != "w1 w3 w5" {
		t.Errorf("INI without extension: %s", got)
	}
}

func TestDeepChildren(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "inv.yaml", `
dc:
  vars: {ansible_user: root, rack: none}
  children:
    rack1:
      vars: {rack: r1}
      children:
        gpu:
          hosts:
            n[001:003]:
`)
	inv := load(t, p)
	hosts, err := inv.Resolve("dc:&gpu")
	if err != nil || len(hosts) != 3 || hosts[0].Name != "n001" || hosts[0].User != "root" || hosts[2].Vars["rack"] != "r1" {
		t.Errorf("nested groups: %+v %v", hosts, err)
	}
	if got := strings.Join(inv.GroupNames(), " "); got != "all dc gpu rack1 ungrouped" {
		t.Errorf("groups: %s", got)
	}
}

func TestHostileRanges(t *testing.T) {
	for _, body := range []string{
		"[web]\nh[1:5:0]\n",
		"[web]\nh[1:5:-1]\n",
		"[web]\nh[0:9999999999]\n",
		"[web]\nh[0:9999][0:9999]\n",
		"h[1:3:x]\n",
	} {
		p := write(t, t.TempDir(), "hosts", body)
		if _, err := Load(p); !errors.Is(err, ErrInventory) {
			t.Errorf("%q: %v", body, err)
		}
	}
	inv := load(t, write(t, t.TempDir(), "hosts", "[web]\nrack[1:2]-n[01:02]:2200\n[web:vars]\nx=[1:2]\n"))
	if got := strings.Join(inv.HostNames(), " "); got != "rack1-n01 rack1-n02 rack2-n01 rack2-n02" {
		t.Errorf("two ranges: %s", got)
	}
	if h := mustHost(t, inv, "rack2-n02"); h.Port != 2200 {
		t.Errorf("port after a range: %+v", h)
	}
}

// TestAnsibleVarsLayout covers what real repositories do and Ansible
// reads: vars files without an extension (host_vars/NAME for a dotted host
// name too), a group_vars directory of files with and without extensions,
// hosts declared under [all] (they are in ungrouped), and
// ansible_connection=local and ansible_become.
func TestAnsibleVarsLayout(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "hosts", "[all]\nlonely\nhere ansible_connection=local\n\n[web]\nweb1.example.com\n")
	write(t, dir, "group_vars/all", "ansible_user: ops\n")
	write(t, dir, "group_vars/web/10-net", "ansible_port: 2200\n")
	write(t, dir, "group_vars/web/20-become.yml", "ansible_become: yes\n")
	write(t, dir, "group_vars/web/.hidden", "ansible_port: 1\n")
	write(t, dir, "host_vars/web1.example.com", "ansible_host: 192.0.2.7\n")
	inv := load(t, p)
	un, err := inv.Resolve("ungrouped")
	if err != nil {
		t.Fatal(err)
	}
	if len(un) != 2 || un[0].Name != "here" || un[1].Name != "lonely" {
		t.Errorf("ungrouped = %v, want here and lonely", un)
	}
	if un[0].Connection != "local" || un[1].Connection != "ssh" || un[1].User != "ops" {
		t.Errorf("connections: %+v", un)
	}
	w := mustHost(t, inv, "web1.example.com")
	if w.Address != "192.0.2.7" || w.Port != 2200 || w.User != "ops" || !w.Become {
		t.Errorf("web1: %+v", w)
	}
}
