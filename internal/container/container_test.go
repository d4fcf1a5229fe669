package container

import (
	"errors"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/audit"
	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/hostfs"
	"github.com/perflab/perflab/internal/snapshot"
)

// Real ids and paths; see testdata/ORIGIN.md.
const (
	podmanID  = "e410980fced155e187b3962c4f1f7b9c5562b2d3e5d6d1f4df170b18664a3604"
	podmanID2 = "e41aa80fced155e187b3962c4f1f7b9c5562b2d3e5d6d1f4df170b18664a3604" // same 3-digit prefix
	stoppedID = "03281cb25e3e4c0a3575b1a290ebd901010bf745ddf9eb1f5e75ceb17e1eb178"
	kubeSlice = "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod1e597579_417e_482f_bf65_5fe170c3aebd.slice"
	podUID    = "1e597579-417e-482f-bf65-5fe170c3aebd"
	sandboxID = "d7dfb4a21fe1703a8537e60d5af248af729315d187b24a538102d14874c8117d"
	nginxID   = "a09bc17f5aa29b0dbdec9ede5f46cf1396d2405917ab02e6f1eb1019f388396e"
	crioSlice = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda5c1f8d5_1919_434d_add7_4afaafdaef89.slice"
	calicoID  = "5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c"
	dockerID  = "6edf3ace1b455647f9b92665a2b8b8c987afb607c4ede2e3724deca55bdcdceb"
)

func v1Lines(path string) string {
	var b strings.Builder
	for i, c := range []string{"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids"} {
		b.WriteString(strings.Repeat("", 0))
		b.WriteString(string(rune('9'-i)) + ":" + c + ":" + path + "\n")
	}
	return b.String() + "0::" + path + "\n"
}

func stat(pid, ppid string) string {
	return pid + " (sh) S " + ppid + " 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1\n"
}

// hostWithContainers is metal with a Podman container (and a stopped one),
// a Kubernetes pod (sandbox + nginx) on v2 paths, a CRI-O container on v1
// paths and a Docker container.
func hostWithContainers(t *testing.T) hostfs.FS {
	t.Helper()
	cj := `[{"id":"` + podmanID + `","names":["web1"]},{"id":"` + podmanID2 + `","names":["web2"]},{"id":"` + stoppedID + `","names":["old"]},` +
		`{"id":"` + calicoID + `","names":["k8s_calico-node_calico-node-hx7cw_kube-system_a5c1f8d5-1919-434d-add7-4afaafdaef89_49"]}]`
	podDir := "/var/log/pods/default_web-0_" + podUID
	edits := map[string]string{
		"/var/lib/containers/storage/overlay-containers/containers.json":               cj,
		"/run/containers/storage/overlay-containers/" + podmanID + "/userdata/pidfile": "6034",
		"/proc/6034/cgroup":     v1Lines("/libpod_parent/libpod-" + podmanID),
		"/proc/6034/stat":       stat("6034", "6030"),
		"/proc/6040/cgroup":     v1Lines("/libpod_parent/libpod-" + podmanID),
		"/proc/6040/stat":       stat("6040", "6034"),
		"/proc/6030/cgroup":     v1Lines("/libpod_parent/conmon"),
		"/proc/6100/cgroup":     v1Lines("/libpod_parent/libpod-" + podmanID2),
		"/proc/6100/stat":       stat("6100", "6099"),
		"/proc/7000/cgroup":     "0::" + kubeSlice + "/cri-containerd-" + sandboxID + ".scope\n",
		"/proc/7000/stat":       stat("7000", "6990"),
		"/proc/7001/cgroup":     "0::" + kubeSlice + "/cri-containerd-" + nginxID + ".scope\n",
		"/proc/7001/stat":       stat("7001", "6991"),
		podDir + "/nginx/0.log": "",
		"/var/log/containers/web-0_default_nginx-" + nginxID + ".log": "",
		"/proc/21689/cgroup": "12:cpuset:" + crioSlice + "/crio-" + calicoID + ".scope\n4:cpu,cpuacct:" + crioSlice + "/crio-" + calicoID + ".scope\n",
		"/proc/21689/stat":   stat("21689", "21680"),
		"/proc/8000/cgroup":  "0::/system.slice/docker-" + dockerID + ".scope\n",
		"/proc/8000/stat":    stat("8000", "7990"),
		"/var/lib/docker/containers/" + dockerID + "/config.v2.json":                                 `{"ID":"` + dockerID + `","Name":"/redis","State":{"Running":true,"Pid":8000}}`,
		"/sys/fs/cgroup" + kubeSlice + "/cri-containerd-" + nginxID + ".scope/cpuset.cpus.effective": "0-1\n",
		"/sys/fs/cgroup" + kubeSlice + "/cri-containerd-" + nginxID + ".scope/cpuset.mems.effective": "0\n",
		"/sys/fs/cgroup" + kubeSlice + "/cri-containerd-" + nginxID + ".scope/cpu.max":               "50000 100000\n",
		"/sys/fs/cgroup" + kubeSlice + "/cri-containerd-" + nginxID + ".scope/cpu.stat":              "usage_usec 9\nnr_periods 1000\nnr_throttled 640\nthrottled_usec 31000000\n",
		"/proc/7001/root/proc/sys/net/core/somaxconn":                                                "128\n",
		"/proc/sys/net/core/somaxconn":                                                               "4096\n",
	}
	return fixture.Tree(t, "metal", edits)
}

func TestResolve(t *testing.T) {
	fs := hostWithContainers(t)
	inv := Collect(fs)
	for _, c := range []struct {
		ref, id, name, pod, runtime string
		pid                         int
	}{
		{"web1", podmanID, "web1", "", "podman", 6034},
		{podmanID, podmanID, "web1", "", "podman", 6034},
		{"e410", podmanID, "web1", "", "podman", 6034},
		{"pod/default/web-0", nginxID, "nginx", "default/web-0", "containerd", 7001},
		{"pod/default/web-0/nginx", nginxID, "nginx", "default/web-0", "containerd", 7001},
		{"a09bc1", nginxID, "nginx", "default/web-0", "containerd", 7001},
		{"calico-node", calicoID, "calico-node", "kube-system/calico-node-hx7cw", "cri-o", 21689},
		{"redis", dockerID, "redis", "", "docker", 8000},
	} {
		got, err := Resolve(inv, c.ref)
		if err != nil {
			t.Errorf("%s: %v", c.ref, err)
			continue
		}
		if got.ID != c.id || got.Name != c.name || got.Pod != c.pod || got.Runtime != c.runtime || got.PID != c.pid {
			t.Errorf("%s: got %+v", c.ref, got)
		}
	}
}

func TestResolveRefusesWithOneLine(t *testing.T) {
	inv := Collect(hostWithContainers(t))
	for ref, want := range map[string]string{
		"old":                       "is not running",
		"0328":                      "is not running",
		"e41":                       "matches 2 running containers (e410980fced1, e41aa80fced1); give more of the id",
		"nope":                      "no container has this name or id",
		"e4":                        "at least 3 hex digits",
		"pod/default/nope":          "no pod default/nope on this host",
		"pod/default/web-0/sidecar": `container "sidecar" of pod default/web-0`,
		"pod/default":               "not of the form pod/NAMESPACE/NAME[/CONTAINER]",
		"":                          "empty reference",
	} {
		_, err := Resolve(inv, ref)
		var re *RefError
		if !errors.As(err, &re) {
			t.Errorf("%q: %v, want a RefError", ref, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
			t.Errorf("%q: %q, want one line with %q", ref, msg, want)
		}
	}
}

func TestContainerOfCgroup(t *testing.T) {
	for p, want := range map[string][3]string{
		"/libpod_parent/libpod-" + podmanID:                                       {podmanID, "podman", ""},
		kubeSlice + "/cri-containerd-" + nginxID + ".scope":                       {nginxID, "containerd", podUID},
		crioSlice + "/crio-" + calicoID + ".scope":                                {calicoID, "cri-o", "a5c1f8d5-1919-434d-add7-4afaafdaef89"},
		"/system.slice/docker-" + dockerID + ".scope":                             {dockerID, "docker", ""},
		"/docker/" + dockerID:                                                     {dockerID, "docker", ""},
		"/kubepods/burstable/pod4d067662-b250-46f6-b1d1-82195608c00f/" + dockerID: {dockerID, "kubernetes", "4d067662-b250-46f6-b1d1-82195608c00f"},
		"/libpod_parent/libpod-" + podmanID + "/init.scope":                       {podmanID, "podman", ""},
	} {
		id, rt, pod, ok := containerOfCgroup(p)
		if !ok || [3]string{id, rt, pod} != want {
			t.Errorf("%s: %s %s %s %v, want %v", p, id, rt, pod, ok, want)
		}
	}
	for _, p := range []string{"/", "/system.slice/sshd.service", "/libpod_parent/conmon", "/libpod_parent/libpod-conmon-" + podmanID[:60]} {
		if id, _, _, ok := containerOfCgroup(p); ok {
			t.Errorf("%s: found %s", p, id)
		}
	}
}

// The Kubernetes done-when on a fixture: a pod's container pinned to node
// 0 while its NIC is on node 1; its somaxconn differs from the host's.
func TestPodViewOnFixture(t *testing.T) {
	fs := hostWithContainers(t)
	tgt, err := Open(fs, "pod/default/web-0/nginx")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tgt.Snapshot(snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Sysctl["net.core.somaxconn"]; got != "128" {
		t.Errorf("container somaxconn %q, want 128 (its namespace)", got)
	}
	if s.Container == nil || s.Container.HostSysctl["net.core.somaxconn"] != "4096" || s.Container.Pod != "default/web-0" {
		t.Fatalf("container fact %+v", s.Container)
	}
	if s.Cgroup.CPUQuotaUS != 50000 || s.Cgroup.NrThrottled != 640 || s.Cgroup.ThrottledUS != 31000000 {
		t.Errorf("cgroup %+v", s.Cgroup)
	}
	w, _ := audit.LookupWorkload("web")
	byRule := map[string]audit.Finding{}
	for _, f := range audit.Run(s, w) {
		byRule[f.Rule] = f
	}
	if f := byRule["CGROUP-CPU-THROTTLED"]; f.Status != audit.Fail || !strings.Contains(f.Observed, "throttled in 640 of 1000 periods") || !strings.Contains(f.Observed, "31.0 s in total") {
		t.Errorf("throttling: %s %s", f.Status, f.Observed)
	}
	if f := byRule["CONTAINER-CPUSET-NIC-NUMA"]; f.Status != audit.Fail {
		t.Errorf("cpuset vs NIC: %s %s", f.Status, f.Observed)
	}
	if f := byRule["NET-SOMAXCONN"]; !strings.Contains(f.Observed, "the host has 4096 — host sysctls do not reach it") || !strings.Contains(f.Fix, "securityContext.sysctls") {
		t.Errorf("somaxconn: %s / %s", f.Observed, f.Fix)
	}

	// tune plan --container proposes the cpuset move and the container's
	// sysctls, and refuses what is the host's.
	h := tgt.TuneHost()
	h.Dir = t.TempDir()
	p := planOf(s, w)
	h.Check(&p)
	dir := "/sys/fs/cgroup" + kubeSlice + "/cri-containerd-" + nginxID + ".scope"
	found := map[string]string{}
	for _, it := range p.Items {
		found[it.Change.Target] = it.Blocked
		if it.Change.Target == dir+"/cpuset.cpus" && it.Change.Value != "4-5" {
			t.Errorf("cpuset move to %q, want 4-5", it.Change.Value)
		}
	}
	for _, want := range []string{dir + "/cpuset.cpus", dir + "/cpuset.mems", "net.core.somaxconn"} {
		if why, ok := found[want]; !ok || strings.Contains(why, "refused") || strings.Contains(why, "host-wide") {
			t.Errorf("plan item %s: present %v, blocked %q", want, ok, why)
		}
	}
	for target, why := range found {
		if strings.HasPrefix(target, "/sys/block/") && !strings.Contains(why, "host-wide") {
			t.Errorf("%s not refused as host-wide: %q", target, why)
		}
	}
}
