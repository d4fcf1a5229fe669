package fleetrun

import (
	"github.com/perflab/perflab/internal/inventory"
	"github.com/perflab/perflab/internal/remote"
)

// Resolution is how perflab would reach one host, decided without
// connecting: what `perflab hosts` prints, as `ansible --list-hosts` and
// `ssh -G` do for theirs.
type Resolution struct {
	Name       string   `json:"name"`
	Connection string   `json:"connection"` // ssh or local (or the plugin perflab refuses)
	Groups     []string `json:"groups,omitempty"`
	// Hops are the SSH connections in the order they are made: the jump
	// hosts (ProxyJump, resolved as OpenSSH does), then the host itself.
	// None for a local host.
	Hops    []Hop  `json:"hops,omitempty"`
	Refused string `json:"refused,omitempty"` // why perflab will not run there
}

// Hop is one SSH connection of a route.
type Hop struct {
	Name          string   `json:"name"` // as written in the config or the inventory
	User          string   `json:"user"`
	Host          string   `json:"host"`
	Port          int      `json:"port"`
	IdentityFiles []string `json:"identity_files,omitempty"`
}

// Resolutions is `perflab hosts`' result.
type Resolutions struct {
	Inventory string       `json:"inventory,omitempty"`
	Pattern   string       `json:"pattern,omitempty"`
	Hosts     []Resolution `json:"hosts"`
}

// ResolveInventory resolves inventory hosts: their connection facts, and
// any ProxyJump ~/.ssh/config gives their address.
func ResolveInventory(cfg *remote.SSHConfig, hosts []inventory.Host) []Resolution {
	out := make([]Resolution, 0, len(hosts))
	for i, h := range FromInventory(hosts) {
		r := Resolution{Name: h.Name, Connection: hosts[i].Connection, Groups: hosts[i].Groups, Refused: h.Refuse}
		if !h.Local && h.Refuse == "" {
			t := h.Target
			if jt, err := cfg.Resolve(t.Host); err == nil {
				t.ProxyJump = jt.ProxyJump
			}
			chain, err := cfg.ChainTarget(t)
			if err != nil {
				r.Refused = err.Error()
			}
			r.Hops = hops(chain)
		}
		out = append(out, r)
	}
	return out
}

// ResolveTargets resolves targets as --on resolves them, through
// ~/.ssh/config.
func ResolveTargets(cfg *remote.SSHConfig, targets []string) ([]Resolution, error) {
	out := make([]Resolution, 0, len(targets))
	for _, s := range targets {
		chain, err := cfg.Chain(s)
		if err != nil {
			return nil, err
		}
		out = append(out, Resolution{Name: chain[len(chain)-1].Name, Connection: "ssh", Hops: hops(chain)})
	}
	return out, nil
}

func hops(chain []remote.Target) []Hop {
	hs := make([]Hop, 0, len(chain))
	for _, t := range chain {
		hs = append(hs, Hop{Name: t.Name, User: t.User, Host: t.Host, Port: t.Port, IdentityFiles: t.IdentityFiles})
	}
	return hs
}
