package testlab

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// removeNamespaces kills every process in the namespaces named labName-*,
// removes their cgroups and deletes the namespaces.
func removeNamespaces(labName string) error {
	ents, err := os.ReadDir("/run/netns")
	if err != nil {
		return nil
	}
	var nss []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), labName+"-") {
			nss = append(nss, e.Name())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, ns := range nss {
		killNamespace(ctx, ns)
	}
	var errs []error
	if err := removeCgroups(labName + "-"); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range nss {
		if err := run(ctx, "ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killNamespace SIGKILLs the processes in ns until none is left.
func killNamespace(ctx context.Context, ns string) {
	for i := 0; i < 50; i++ {
		out, _ := exec.CommandContext(ctx, "ip", "netns", "pids", ns).Output()
		pids := strings.Fields(string(out))
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			if n, err := strconv.Atoi(p); err == nil {
				syscall.Kill(n, syscall.SIGKILL) //nolint:errcheck
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Sweep removes labs whose names start with prefix and whose creating
// process is gone (a test binary killed with SIGKILL cannot clean up).
func Sweep(prefix string) error {
	ents, err := os.ReadDir("/run/netns")
	if err != nil {
		return nil
	}
	labs := map[string]bool{}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix+"-")
		if !ok {
			continue
		}
		f := strings.SplitN(rest, "-", 3) // pid, seq, role
		if len(f) < 3 {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		labs[prefix+"-"+f[0]+"-"+f[1]] = true
	}
	var errs []error
	for l := range labs {
		errs = append(errs, removeNamespaces(l))
	}
	// Cgroups whose lab's namespaces are already gone.
	if root, _, err := cpuCgroupRoot(); err == nil {
		ents, _ := os.ReadDir(root)
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), prefix+"-")
			if !ok || !e.IsDir() {
				continue
			}
			pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
			if err == nil && pid != os.Getpid() && !alive(pid) {
				errs = append(errs, removeCgroup(root+"/"+e.Name()))
			}
		}
	}
	return errors.Join(errs...)
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
