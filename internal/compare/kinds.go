package compare

import "github.com/perflab/perflab/internal/snapshot/factpath"

// CauseKind says what a likely cause is: a setting someone can change back,
// the machine's identity, or the host drifting during the runs.
type CauseKind string

const (
	KindSetting   CauseKind = "setting"
	KindIdentity  CauseKind = "identity"
	KindHostDrift CauseKind = "host-drift"
	// kindState marks facts that are conditions during the runs (free
	// memory, runtime mounts, dirty pages, load): never likely causes.
	kindState CauseKind = "state"
)

// factKind classifies a difference by the fact catalogue
// (factpath.KindOf): settings and identity can be causes; state and meta
// (and paths the catalogue does not know) are conditions.
func factKind(path string) CauseKind {
	k, ok := factpath.KindOf(path)
	switch {
	case !ok:
		return kindState
	case k == factpath.Setting:
		return KindSetting
	case k == factpath.Identity:
		return KindIdentity
	}
	return kindState
}

// IsStateFact reports whether a snapshot fact is state (what the host was
// doing), not a setting or identity.
func IsStateFact(path string) bool { return factKind(path) == kindState }
