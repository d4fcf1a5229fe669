package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/fleetrun"
)

// Hosts prints `perflab hosts`: for each host, how it would be reached —
// the SSH route (jump hosts first, as user@address:port) and the identity
// files, or "local", or why perflab refuses it — without connecting.
func Hosts(w io.Writer, r fleetrun.Resolutions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tCONNECTION\tROUTE\tGROUPS")
	for _, h := range r.Hosts {
		route := ""
		switch {
		case h.Refused != "":
			route = "refused: " + h.Refused
		case h.Connection == "local":
			route = "this machine (no SSH)"
		default:
			var hops []string
			for _, hp := range h.Hops {
				hops = append(hops, fmt.Sprintf("%s@%s:%d", hp.User, hp.Host, hp.Port))
			}
			route = strings.Join(hops, " -> ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Name, h.Connection, route, strings.Join(h.Groups, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, h := range r.Hosts {
		if n := len(h.Hops); n > 0 && len(h.Hops[n-1].IdentityFiles) > 0 {
			fmt.Fprintf(w, "%s: identity files %s\n", h.Name, strings.Join(h.Hops[n-1].IdentityFiles, ", "))
		}
	}
	fmt.Fprintf(w, "%d host(s); nothing was dialled\n", len(r.Hosts))
	return nil
}
