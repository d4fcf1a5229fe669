package deps

import (
	"context"
	"strings"

	"github.com/perflab/perflab/internal/hostfs"
)

// ToolStatus is one tool as 'perflab deps' reports it.
type ToolStatus struct {
	Tool    string   `json:"tool"`
	Path    string   `json:"path,omitempty"` // "" when not installed
	Version string   `json:"version,omitempty"`
	Suites  []string `json:"suites"`
	Package string   `json:"package"`
	Why     string   `json:"why"`
}

// Status is which tools a suite needs, which are installed, and the
// command that installs the rest ("" when nothing is missing).
type Status struct {
	PackageManager string       `json:"package_manager"`
	Tools          []ToolStatus `json:"tools"`
	Install        string       `json:"install"`
}

// Check looks up the tools of suite on this host; fs gives the package
// manager (from /etc/os-release).
func Check(ctx context.Context, fs hostfs.FS, suite string) Status {
	pm := PackageManager(fs)
	st := Status{PackageManager: pm}
	var missing []Tool
	for _, t := range ForSuite(suite) {
		r := ToolStatus{Tool: t.Name, Path: t.Path(), Suites: t.Suites, Package: t.Packages[pm], Why: t.Why}
		if r.Path != "" {
			r.Version, _ = t.Version(ctx)
		} else {
			missing = append(missing, t)
		}
		st.Tools = append(st.Tools, r)
	}
	st.Install = strings.Join(InstallCommand(pm, missing), " ")
	return st
}
