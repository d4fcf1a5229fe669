package cli

import (
	"errors"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fleetrun"
	"github.com/perflab/perflab/internal/inventory"
	"github.com/perflab/perflab/internal/remote"
	"github.com/perflab/perflab/internal/report"
	"github.com/spf13/cobra"
)

type hostsOptions struct {
	inventory, sshConfig string
	args                 []string
}

func newHostsCmd(e *env) *cobra.Command {
	var o hostsOptions
	var out outputFlags
	cmd := &cobra.Command{
		Use:   "hosts [PATTERN | TARGET ...]",
		Short: "Show which hosts a pattern or target selects and how each would be reached, without connecting",
		Long: `hosts resolves what --on would reach and prints it without dialling anything,
as 'ansible --list-hosts' and 'ssh -G' do: with --inventory, the hosts an
Ansible pattern selects (address, port, user, connection, groups); without,
each TARGET through ~/.ssh/config (HostName, User, Port, IdentityFile with
its % tokens, and the whole ProxyJump chain in the order it is dialled).`,
		Example: `  perflab hosts --inventory hosts.ini 'web:&prod'
  perflab hosts far-db                   # the ProxyJump chain to far-db
  perflab hosts --inventory inv.yml all --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.validate(); err != nil {
				return err
			}
			o.args = args
			res, err := o.run()
			if err != nil {
				return err
			}
			return writeOut(&out, e.stdout, func(w io.Writer) error {
				if out.format == "json" {
					return writeJSON(w, res)
				}
				return report.Hosts(w, res)
			})
		},
	}
	cmd.Flags().StringVarP(&o.inventory, "inventory", "i", "", "Ansible inventory (INI or YAML); PATTERN selects from it (default all)")
	cmd.Flags().StringVarP(&o.sshConfig, "ssh-config", "F", "", "ssh_config file (default ~/.ssh/config)")
	out.register(cmd, "text", "text", "json")
	return cmd
}

func (o hostsOptions) run() (fleetrun.Resolutions, error) {
	cfg, err := remote.LoadSSHConfig(o.sshConfig)
	if err != nil {
		return fleetrun.Resolutions{}, clierr.Wrap(clierr.Usage, err, "check the ssh_config file")
	}
	if o.inventory == "" {
		if len(o.args) == 0 {
			return fleetrun.Resolutions{}, clierr.Usagef("e.g. perflab hosts web1, or --inventory FILE PATTERN", "name a target or an inventory")
		}
		hs, err := fleetrun.ResolveTargets(cfg, o.args)
		if err != nil {
			return fleetrun.Resolutions{}, clierr.Wrap(clierr.Usage, err, "check ~/.ssh/config")
		}
		return fleetrun.Resolutions{Hosts: hs}, nil
	}
	inv, err := inventory.Load(o.inventory)
	if err != nil {
		return fleetrun.Resolutions{}, clierr.Wrap(clierr.Usage, err, "check the inventory file")
	}
	pattern := strings.Join(o.args, ":")
	if pattern == "" {
		pattern = "all"
	}
	sel, err := inv.Resolve(pattern)
	if err != nil {
		hint := ""
		if errors.Is(err, inventory.ErrPattern) {
			hint = "groups: " + strings.Join(inv.GroupNames(), ", ")
		}
		return fleetrun.Resolutions{}, clierr.Wrap(clierr.Usage, err, hint)
	}
	return fleetrun.Resolutions{Inventory: o.inventory, Pattern: pattern, Hosts: fleetrun.ResolveInventory(cfg, sel)}, nil
}
