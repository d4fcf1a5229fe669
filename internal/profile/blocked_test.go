package profile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/flame/folded"
)

func TestMergeMixedKeepsOffCPUApart(t *testing.T) {
	on := &folded.Profile{Stacks: []folded.Stack{{Frames: "app;main;work", Count: 300}, {Frames: "app;main;read", Count: 10}}}
	off := &folded.Profile{Stacks: []folded.Stack{{Frames: "app;main;read", Count: 900}}}
	m := MergeMixed(on, off)
	got := map[string]uint64{}
	for _, s := range m.Stacks {
		got[s.Frames] = s.Count
	}
	want := map[string]uint64{"app;main;work": 300, "app;main;read": 10, "app;main;read;" + OffCPUFrame: 900}
	if len(got) != len(want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	for i := 1; i < len(m.Stacks); i++ {
		if m.Stacks[i-1].Frames > m.Stacks[i].Frames {
			t.Fatal("merged profile not sorted")
		}
	}
}

func TestBlockedValidate(t *testing.T) {
	for _, c := range []struct {
		b    Blocked
		t    Target
		want string
	}{
		{Blocked{OffCPU: true, Locks: true}, Target{PID: 1}, "cannot be combined"},
		{Blocked{OffCPU: true}, Target{Command: []string{"ls"}}, "running process"},
		{Blocked{Locks: true, MinBlock: -time.Millisecond}, Target{All: true}, "negative"},
	} {
		err := c.b.Validate(c.t)
		var oe *OptionError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--") {
			t.Errorf("%+v %+v: %v, want an option error about %q naming fields, not flags", c.b, c.t, err, c.want)
		}
	}
	if err := (Blocked{Mixed: true}).Validate(Target{PID: 1}); err != nil {
		t.Errorf("valid --mixed -p: %v", err)
	}
}
