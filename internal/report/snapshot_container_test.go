package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture/fixturesnap"
	"github.com/perflab/perflab/internal/snapshot"
	"github.com/perflab/perflab/internal/termfmt"
)

// A container's snapshot says whose facts it holds.
func TestSnapshotTextNamesTheContainer(t *testing.T) {
	s := fixturesnap.Collect(t, "metal")
	s.Container = &snapshot.Container{Runtime: "containerd", ID: strings.Repeat("a0", 32), Name: "nginx", Pod: "shop/web-0", PID: 7001,
		HostSysctl: map[string]string{"net.core.somaxconn": "4096"}}
	var b bytes.Buffer
	if err := SnapshotText(&b, s, termfmt.Style{}, false); err != nil {
		t.Fatal(err)
	}
	want := "container nginx shop/web-0  containerd a0a0a0a0a0a0 pid 7001  net sysctls and cgroup are the container's  1 namespaced sysctl(s) differ from the host's"
	if !strings.Contains(b.String(), want) {
		t.Errorf("no container line %q in\n%s", want, b.String())
	}
}
