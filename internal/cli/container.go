package cli

import (
	"errors"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/container"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/spf13/cobra"
)

// containerHelp is the --container flag's help, shared by every command.
const containerHelp = "a container as the target: id, unique id prefix, name, or pod/NAMESPACE/NAME[/CONTAINER] (its network namespace and cgroup; see docs/containers.md)"

// registerContainer adds --container to a command.
func registerContainer(cmd *cobra.Command, ref *string) {
	cmd.Flags().StringVar(ref, "container", "", containerHelp)
}

// openTarget resolves --container (or a --pid that lives in a container)
// on fs; nil when the target is the host itself.
func openTarget(fs hostfs.FS, ref string, pid int) (*container.Target, error) {
	var t *container.Target
	var err error
	switch {
	case ref != "" && pid != 0:
		return nil, clierr.Usagef("use one of them", "--container and --pid both name the target")
	case ref != "":
		t, err = container.Open(fs, ref)
	case pid > 0:
		t, err = container.OpenPID(fs, pid)
		if err == nil && t.C.Runtime == "process" && (t.HostNetwork() || !fs.Live()) {
			return nil, nil // a host process: the host's view with its cgroup (Options.PID)
		}
	default:
		return nil, nil
	}
	return t, targetErr(err)
}

// targetErr words a target's errors: a reference that names no running
// container is a usage error (2), a container that stopped a runtime one (3).
func targetErr(err error) error {
	var re *container.RefError
	var stopped *container.ErrStopped
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return clierr.Usagef("list running containers with 'podman ps', 'docker ps' or 'crictl ps'", "%v", err)
	case errors.As(err, &stopped), errors.Is(err, hostfs.ErrProcessGone):
		return clierr.Runtimef("", "%v", err)
	}
	return clierr.Runtimef("", "%v", err)
}

// collectTarget snapshots --root (default /), or the container on it.
func collectTarget(root, ref string, pid int, subset snapshot.Options) (*snapshot.Snapshot, hostfs.FS, *container.Target, error) {
	fs, err := openRoot(root)
	if err != nil {
		return nil, fs, nil, err
	}
	t, err := openTarget(fs, ref, pid)
	if err != nil {
		return nil, fs, nil, err
	}
	if t == nil {
		subset.PID = pid
		s, fs, err := collectRootOpt(root, subset)
		return s, fs, nil, err
	}
	s, err := t.Snapshot(snapshot.Options{})
	if err != nil {
		return nil, fs, t, targetErr(err)
	}
	return s, t.View(), t, nil
}
