package snapshot

import (
	"strings"
	"testing"
)

func TestParseCPUMax(t *testing.T) {
	for _, c := range []struct {
		in        string
		q, p      int64
		wantError bool
	}{
		{"max 100000", -1, 100000, false},
		{"200000 100000\n", 200000, 100000, false},
		{"max", -1, 0, false},
		{"0 100000", 0, 0, true},
		{"-5 100000", 0, 0, true},
		{"max 0", 0, 0, true},
		{"max 100000 1", 0, 0, true},
		{"", 0, 0, true},
		{"lots 100000", 0, 0, true},
	} {
		q, p, err := parseCPUMax(c.in)
		if (err != nil) != c.wantError || q != c.q || p != c.p {
			t.Errorf("parseCPUMax(%q) = %d, %d, %v; want %d, %d, error %v", c.in, q, p, err, c.q, c.p, c.wantError)
		}
	}
}

func TestParseCFSQuota(t *testing.T) {
	for in, want := range map[string]int64{"-1\n": -1, "50000": 50000} {
		got, err := parseCFSQuota(in)
		if err != nil || got != want {
			t.Errorf("parseCFSQuota(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "-2", "x", ""} {
		if _, err := parseCFSQuota(in); err == nil {
			t.Errorf("parseCFSQuota(%q) accepted", in)
		}
	}
}

func TestParseFlatKeyed(t *testing.T) {
	kv, err := parseFlatKeyed("usage_usec 10\nnr_periods 5\n\nnr_throttled 2\n")
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "kv", kv, map[string]int64{"usage_usec": 10, "nr_periods": 5, "nr_throttled": 2})
	for _, bad := range []string{"nr_periods\n", "nr_periods x\n", " 5\n"} {
		if _, err := parseFlatKeyed(bad); err == nil {
			t.Errorf("parseFlatKeyed(%q) accepted", bad)
		}
	}
}

func TestParseMemoryMax(t *testing.T) {
	for in, want := range map[string]int64{
		"max": -1, "17179869184\n": 17179869184, "9223372036854771712": -1, "0": 0,
	} {
		got, err := parseMemoryMax(in)
		if err != nil || got != want {
			t.Errorf("parseMemoryMax(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1G"} {
		if _, err := parseMemoryMax(bad); err == nil {
			t.Errorf("parseMemoryMax(%q) accepted", bad)
		}
	}
}

func TestCgroupDirs(t *testing.T) {
	d, err := cgroupDirs("/sys/fs/cgroup", "/", "/system.slice/app.service")
	wantEq(t, "dirs", d, []string{"/sys/fs/cgroup/system.slice/app.service", "/sys/fs/cgroup/system.slice", "/sys/fs/cgroup"})
	wantEq(t, "err", err, error(nil))
	d, _ = cgroupDirs("/sys/fs/cgroup/cpu", "/", "/")
	wantEq(t, "root", d, []string{"/sys/fs/cgroup/cpu"})
	// A container sees its own subtree mounted: /docker/abc is the mount root.
	d, _ = cgroupDirs("/sys/fs/cgroup", "/docker/abc", "/docker/abc/sub")
	wantEq(t, "container", d, []string{"/sys/fs/cgroup/sub", "/sys/fs/cgroup"})
	for _, c := range [][3]string{
		{"/sys/fs/cgroup", "/docker/abc", "/other"},
		{"/sys/fs/cgroup", "/", "relative"},
		{"/sys/fs/cgroup", "/", "/a/../../etc"},
	} {
		if _, err := cgroupDirs(c[0], c[1], c[2]); err == nil {
			t.Errorf("cgroupDirs%q accepted", c)
		}
	}
}

func FuzzParseCPUMax(f *testing.F) {
	for _, s := range []string{"max 100000", "200000 100000", "max", "1 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, p, err := parseCPUMax(s)
		if err != nil {
			return
		}
		if q == 0 || q < -1 || p < 0 {
			t.Errorf("parseCPUMax(%q) = %d, %d accepted", s, q, p)
		}
	})
}

func FuzzParseFlatKeyed(f *testing.F) {
	f.Add("nr_periods 1843200\nnr_throttled 412377\nthrottled_usec 9823412345\n")
	f.Add("a 1\n\nb -2\n")
	f.Fuzz(func(t *testing.T, s string) {
		kv, err := parseFlatKeyed(s)
		if err != nil {
			return
		}
		for k := range kv {
			if k == "" || strings.ContainsAny(k, " \n") {
				t.Errorf("parseFlatKeyed(%q) key %q", s, k)
			}
		}
	})
}

func FuzzParseMemoryMax(f *testing.F) {
	f.Add("max")
	f.Add("9223372036854771712")
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseMemoryMax(s); err == nil && v < -1 {
			t.Errorf("parseMemoryMax(%q) = %d", s, v)
		}
	})
}

func FuzzCgroupDirs(f *testing.F) {
	f.Add("/sys/fs/cgroup", "/", "/system.slice/app.service")
	f.Add("/sys/fs/cgroup", "/docker/abc", "/docker/abc/x")
	f.Fuzz(func(t *testing.T, mp, root, path string) {
		dirs, err := cgroupDirs(mp, root, path)
		if err != nil {
			return
		}
		if len(dirs) == 0 {
			t.Fatal("no dirs without an error")
		}
		top := dirs[len(dirs)-1]
		for _, d := range dirs {
			// Every level stays inside the hierarchy's mount point.
			if !strings.HasPrefix(d, top) {
				t.Errorf("cgroupDirs(%q, %q, %q): %q outside %q", mp, root, path, d, top)
			}
			if strings.Contains(d, "/../") || strings.HasSuffix(d, "/..") {
				t.Errorf("cgroupDirs(%q, %q, %q): %q climbs", mp, root, path, d)
			}
		}
	})
}
