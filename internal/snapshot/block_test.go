package snapshot

import (
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

func blockNamed(s *Snapshot, name string) *BlockDevice {
	for i := range s.Block {
		if s.Block[i].Name == name {
			return &s.Block[i]
		}
	}
	return nil
}

func TestBlockMetal(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", nil), Options{}, collectBlock)
	wantEq(t, "devices", len(s.Block), 2)
	sda := blockNamed(s, "sda")
	wantEq(t, "sda", *sda, BlockDevice{
		Name: "sda", Model: "PERC H730P Mini", Vendor: "DELL", SizeBytes: 2341994496 * 512,
		Rotational: true, Scheduler: "mq-deadline", Schedulers: []string{"none", "mq-deadline", "kyber", "bfq"},
		ReadAheadKiB: 128, NrRequests: 256, WriteCache: "write through", HWQueues: 1,
	})
	nv := blockNamed(s, "nvme0n1")
	wantEq(t, "nvme model", nv.Model, "Dell Express Flash PM1725b 1.6TB SFF")
	wantEq(t, "nvme rotational", nv.Rotational, false)
	wantEq(t, "nvme scheduler", nv.Scheduler, "none")
	wantEq(t, "nvme write cache", nv.WriteCache, "write back")
	wantEq(t, "nvme nr_requests", nv.NrRequests, int64(1023))
	wantEq(t, "nvme hw queues", nv.HWQueues, 8)
	if len(s.Unavailable) != 0 {
		t.Errorf("unavailable = %v", s.Unavailable)
	}
}

func TestBlockKVMSkipsIdleVirtual(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "kvm", nil), Options{}, collectBlock)
	if blockNamed(s, "loop0") != nil {
		t.Error("an unattached loop device (size 0) is listed")
	}
	vda := blockNamed(s, "vda")
	if vda == nil {
		t.Fatalf("vda missing: %+v", s.Block)
	}
	wantEq(t, "vda scheduler", vda.Scheduler, "mq-deadline")
	wantEq(t, "vda virtual", vda.Virtual, false)
}

// A device without a scheduler (bio-based, like zram) fails procfs's
// all-or-nothing queue reader; the facts it has are still recorded.
func TestBlockFallbackPerFile(t *testing.T) {
	t.Parallel()
	q := "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/host0/target0:2:0/0:2:0:0/block/sda/queue/"
	s := runAreas(t, tree(t, "metal", map[string]string{
		q + "scheduler":   fixture.Delete,
		q + "nr_requests": fixture.Delete,
	}), Options{}, collectBlock)
	sda := blockNamed(s, "sda")
	wantEq(t, "scheduler", sda.Scheduler, "")
	wantEq(t, "read-ahead still read", sda.ReadAheadKiB, int64(128))
	wantEq(t, "write cache still read", sda.WriteCache, "write through")
	wantEq(t, "rotational still read", sda.Rotational, true)
	wantMissing(t, s, "block[sda].scheduler", "does not exist")
	wantMissing(t, s, "block[sda].nr_requests", "does not exist")
	wantPresent(t, s, "block[nvme0n1]")
}

func TestBlockUnavailable(t *testing.T) {
	t.Parallel()
	s := runAreas(t, tree(t, "metal", map[string]string{"/sys/block": fixture.Delete}), Options{}, collectBlock)
	wantMissing(t, s, "block", "does not exist")
}

func TestParseScheduler(t *testing.T) {
	for in, want := range map[string][2]any{
		"none [mq-deadline] kyber bfq ": {"mq-deadline", []string{"none", "mq-deadline", "kyber", "bfq"}},
		"[none] mq-deadline":            {"none", []string{"none", "mq-deadline"}},
		"none":                          {"none", []string{"none"}},
		"":                              {"", []string(nil)},
		"[]":                            {"", []string{"[]"}}, // no word selected: the choice list parser (package knob) keeps it as it is
	} {
		cur, all := parseScheduler(in)
		wantEq(t, "current of "+in, cur, want[0].(string))
		wantEq(t, "all of "+in, all, want[1].([]string))
	}
}

func FuzzParseScheduler(f *testing.F) {
	f.Add("none [mq-deadline] kyber bfq ")
	f.Add("[")
	f.Fuzz(func(t *testing.T, s string) {
		cur, all := parseScheduler(s)
		if cur == "" {
			return
		}
		for _, a := range all {
			if a == cur {
				return
			}
		}
		t.Errorf("parseScheduler(%q): current %q not among %q", s, cur, all)
	})
}
