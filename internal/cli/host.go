package cli

import (
	"errors"
	"github.com/perflab/perflab/internal/audit"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// openRoot opens --root, turning a directory that is not a Linux tree into
// a usage error with a hint.
func openRoot(root string) (hostfs.FS, error) {
	fs, err := hostfs.New(root)
	if err != nil {
		if errors.Is(err, hostfs.ErrNotLinuxRoot) {
			return fs, clierr.Usagef("--root must hold proc/ and sys/ of a Linux host, e.g. a tree written by 'perflab snapshot' fixtures or a mounted image", "%v", err)
		}
		return fs, clierr.Usagef("check the --root path", "%v", err)
	}
	return fs, nil
}

// collectRoot opens --root and takes a snapshot of it.
func collectRoot(root string, pid int) (*snapshot.Snapshot, hostfs.FS, error) {
	return collectRootOpt(root, snapshot.Options{PID: pid})
}

// collectRootOpt is collectRoot with the snapshot's options (the audit's
// sysctl subset).
func collectRootOpt(root string, opt snapshot.Options) (*snapshot.Snapshot, hostfs.FS, error) {
	fs, err := openRoot(root)
	if err != nil {
		return nil, fs, err
	}
	s, err := snapshot.Collect(fs, opt)
	if err != nil {
		return nil, fs, clierr.Wrap(clierr.Runtime, err, "")
	}
	return s, fs, nil
}

// resolveWorkload maps audit's workload errors to usage errors.
func resolveWorkload(name string) (*audit.Workload, error) {
	w, err := audit.ResolveWorkload(name)
	if err != nil {
		var unk audit.ErrUnknownWorkload
		if errors.As(err, &unk) {
			return nil, clierr.Usagef("list them with 'perflab rules --workloads'", "%v", err)
		}
		return nil, clierr.Usagef("fix the profile file", "%v", err)
	}
	return w, nil
}
