package snapshot

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func TestServicesMetal(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectServices)
	wantEq(t, "irqbalance", s.Services["irqbalance"], Service{Running: true, PIDs: []int{1187}})
	wantEq(t, "auditd", s.Services["auditd"], Service{Running: true, PIDs: []int{1254}})
	// Watched but absent daemons are recorded as not running.
	wantEq(t, "tuned", s.Services["tuned"], Service{})
	if _, ok := s.Services["tuned"]; !ok {
		t.Error("tuned not recorded; a rule could not tell not-running from not-looked-at")
	}
	wantEq(t, "services", len(s.Services), len(watchedServices))
}

func TestServicesTruncatedComm(t *testing.T) {
	t.Parallel()
	fs := tree(t, "kvm", map[string]string{
		"/proc/777/comm": "power-profiles-\n",
		"/proc/778/comm": "tuned\n",
		"/proc/779/comm": "tuned\n",
	})
	s := runAreas(t, fs, Options{}, collectServices)
	wantEq(t, "power-profiles-daemon", s.Services["power-profiles-daemon"], Service{Running: true, PIDs: []int{777}})
	wantEq(t, "tuned", s.Services["tuned"].PIDs, []int{778, 779})
	wantEq(t, "irqbalance", s.Services["irqbalance"].Running, false)
}

func TestServicesNoProc(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "kvm", map[string]string{"/proc": fixture.Delete}), Options{}, collectServices)
	wantMissing(t, s, "services", "/proc")
}
