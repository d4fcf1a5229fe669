package snapshot

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
)

const limitsHeader = "Limit                     Soft Limit           Hard Limit           Units     \n"

func TestLimitsMetal(t *testing.T) {
	lim := limitsHeader +
		"Max processes             256979               256979               processes \n" +
		"Max open files            1024                 1048576              files     \n" +
		"Max locked memory         8388608              unlimited            bytes     \n"
	s := runAreas(t, overlay(t, "metal", map[string]string{"/proc/4242/limits": lim}), Options{}, collectLimits)
	l := s.Limits
	wantEq(t, "file-nr", []int64{l.FileNrAllocated, l.FileMax}, []int64{614, 2466170})
	wantEq(t, "threads", l.Threads, int64(1203))
	// Without --pid, the collecting process (proc/self → 4242) counts.
	wantEq(t, "nofile", []int64{l.NofileSoft, l.NofileHard}, []int64{1024, 1048576})
}

func TestLimitsPID(t *testing.T) {
	lim := limitsHeader + "Max open files            unlimited            unlimited            files     \n"
	s := runAreas(t, overlay(t, "metal", map[string]string{"/proc/4243/limits": lim}), Options{PID: 4243}, collectLimits)
	wantEq(t, "nofile of --pid", []int64{s.Limits.NofileSoft, s.Limits.NofileHard}, []int64{-1, -1})
}

func TestLimitsMissing(t *testing.T) {
	s := runAreas(t, overlay(t, "kvm", map[string]string{
		"/proc/sys/fs/file-nr": "614\n",
		"/proc/4242/limits":    fixture.Delete,
	}), Options{}, collectLimits)
	wantMissing(t, s, "limits.file_nr_allocated", "want 3 fields")
	wantMissing(t, s, "limits.nofile_soft", "/proc/self/limits does not exist")
	wantPresent(t, s, "limits.threads")
}

func TestParseLimits(t *testing.T) {
	data := limitsHeader +
		"Max cpu time              unlimited            unlimited            seconds   \n" +
		"Max open files            1024                 524288               files     \n" +
		"Max nice priority         0                    0                    \n" +
		"Max realtime timeout      unlimited            unlimited            us        \n"
	got, err := parseLimits([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "limits", got, map[string]rlimit{
		"Max cpu time":         {-1, -1},
		"Max open files":       {1024, 524288},
		"Max nice priority":    {0, 0},
		"Max realtime timeout": {-1, -1},
	})
	if _, err := parseLimits([]byte(limitsHeader)); err == nil {
		t.Error("a header-only file parsed")
	}
	if _, err := parseLimits([]byte(strings.Repeat("garbage line\n", 3))); err == nil {
		t.Error("garbage parsed")
	}
}
