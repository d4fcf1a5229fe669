package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPattern: any string either fails to parse with ErrPattern or parses
// to a pattern whose canonical form parses to itself, and selecting with
// it never panics and returns only hosts of the inventory, sorted, without
// duplicates.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"all", "web:db", "prod:&canary:!db", "!x", "~db\\d", "web0[12]*", "a,b,&c", "web[0:2]", "::", "&", "~(", "[", "*.example.com:!web"} {
		f.Add(s)
	}
	inv, err := Load("testdata/ini/hosts")
	if err != nil {
		f.Fatal(err)
	}
	all := map[string]bool{}
	for _, n := range inv.HostNames() {
		all[n] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			if !strings.Contains(err.Error(), "host pattern") {
				t.Fatalf("error without ErrPattern: %v", err)
			}
			return
		}
		canon := p.String()
		q, err := ParsePattern(canon)
		if err != nil || q.String() != canon {
			t.Fatalf("canonical form %q of %q does not round-trip: %v %q", canon, s, err, q)
		}
		names, err := p.Select(inv)
		if err != nil {
			return
		}
		for i, n := range names {
			if !all[n] || i > 0 && names[i-1] >= n {
				t.Fatalf("%q selected %v", s, names)
			}
		}
	})
}

// FuzzLoad: any file is an inventory or an ErrInventory, never a panic.
func FuzzLoad(f *testing.F) {
	for _, p := range []string{"testdata/ini/hosts", "testdata/yaml/inventory.yml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[a:children]\nb\n[b]\nh[1:3]:22 x='y z'\n"))
	f.Add([]byte("all:\n  children:\n    a: {hosts: {'h[a:c]': {x: [1, 2]}}}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, name := range []string{"hosts", "hosts.yml"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			inv, err := Load(p)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "inventory") {
					t.Fatalf("error without ErrInventory: %v", err)
				}
				continue
			}
			_, _ = inv.Resolve("all")
		}
	})
}
