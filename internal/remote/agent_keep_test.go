package remote

import "testing"

// `perflab audit` leaves facts out of a snapshot only it uses unless the
// agent keeps that snapshot: KeepsSnapshot must say so exactly when
// KeepSnapshot would write it.
func TestKeepsSnapshot(t *testing.T) {
	for _, c := range []struct {
		file, remote string
		want         bool
	}{
		{"", "", false},
		{"/tmp/x", "", false},
		{"", "1", false},
		{"/tmp/x", "0", false},
		{"/tmp/x", "1", true},
	} {
		t.Setenv(SnapshotEnv, c.file)
		t.Setenv("PERFLAB_REMOTE", c.remote)
		if got := KeepsSnapshot(); got != c.want {
			t.Errorf("%s=%q PERFLAB_REMOTE=%q: KeepsSnapshot() = %v, want %v", SnapshotEnv, c.file, c.remote, got, c.want)
		}
	}
}
