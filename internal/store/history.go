package store

import (
	"context"
	"sort"

	"github.com/perflab/perflab/internal/run"
)

// HistoryLimit is how many earlier runs History loads per probe and host.
const HistoryLimit = 20

// History loads the earlier runs of the given runs' probes on the given
// runs' hosts — each (probe, host) pair once, in a stable order — for the
// A/A noise floor of compare. It is best effort: a read error ends the
// list early, and without history there is no noise floor, nothing worse.
// A nil store has no history.
func (s *Store) History(ctx context.Context, runs []*run.Run) []*run.Run {
	if s == nil || len(runs) == 0 {
		return nil
	}
	type key struct{ probe, host string }
	seen := map[key]bool{}
	var keys []key
	for _, r := range runs {
		k := key{r.Probe, r.Host}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].probe != keys[j].probe {
			return keys[i].probe < keys[j].probe
		}
		return keys[i].host < keys[j].host
	})
	var out []*run.Run
	for _, k := range keys {
		h, err := s.Runs(ctx, Filter{Probe: k.probe, Host: k.host, Limit: HistoryLimit})
		if err != nil {
			return out
		}
		out = append(out, h...)
	}
	return out
}
