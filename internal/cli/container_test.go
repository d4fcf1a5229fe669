package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/clierr"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/tune"
)

// A Kubernetes pod on the two-node metal tree (containerd, systemd driver,
// cgroup v2; paths from containerd/nri#227, see
// internal/container/testdata/ORIGIN.md): its container is pinned to node
// 0 while eth0 is on node 1. `tune plan --container` proposes moving the
// cpuset to the NIC's node and refuses the host's knobs.
func TestTunePlanContainerMovesCpuset(t *testing.T) {
	const (
		slice = "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod1e597579_417e_482f_bf65_5fe170c3aebd.slice"
		id    = "a09bc17f5aa29b0dbdec9ede5f46cf1396d2405917ab02e6f1eb1019f388396e"
	)
	dir := "/sys/fs/cgroup" + slice + "/cri-containerd-" + id + ".scope"
	fs := fixture.Tree(t, "metal", map[string]string{
		"/proc/7001/cgroup": "0::" + slice + "/cri-containerd-" + id + ".scope\n",
		"/proc/7001/stat":   "7001 (nginx) S 6991 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1\n",
		"/var/log/pods/default_web-0_1e597579-417e-482f-bf65-5fe170c3aebd/nginx/0.log": "",
		dir + "/cpuset.cpus.effective": "0-1\n",
		dir + "/cpuset.mems.effective": "0\n",
		dir + "/cpuset.cpus":           "0-1\n",
		dir + "/cpuset.mems":           "0\n",
	})
	code, out, errOut := runCLI(t, "tune", "plan", "web", "--root", fs.Root(), "--container", "pod/default/web-0", "--format", "json")
	if code != clierr.OK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p tune.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	got := map[string]tune.Item{}
	for _, it := range p.Items {
		got[it.Change.Target] = it
	}
	if it, ok := got[dir+"/cpuset.cpus"]; !ok || it.Change.Value != "4-5" || it.Blocked != "" || it.Rule != "CONTAINER-CPUSET-NIC-NUMA" {
		t.Errorf("cpuset.cpus item %+v (present %v)", it, ok)
	}
	if it, ok := got[dir+"/cpuset.mems"]; !ok || it.Change.Value != "1" {
		t.Errorf("cpuset.mems item %+v (present %v)", it, ok)
	}
	for target, it := range got {
		if strings.HasPrefix(target, "/sys/block/") || strings.HasPrefix(target, "/sys/class/net/") {
			if !strings.Contains(it.Blocked, "host-wide") {
				t.Errorf("%s not refused as host-wide: %q", target, it.Blocked)
			}
		}
	}
}
