package trace

import (
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/hostfs"
)

// sockOwners maps socket inodes to the process holding them, the
// established-flow table retransmissions are attributed by: most
// retransmissions fire from the retransmit timer in softirq, where the
// current task is whoever was interrupted, so the event's own PID is not the
// owner. It rescans /proc/*/fd when an unknown inode arrives, at most every
// 200 ms.
type sockOwners struct {
	fs         hostfs.FS
	byIno      map[uint64]owner
	lastScan   time.Time
	unresolved int
	seenMiss   map[uint64]bool
}

type owner struct {
	pid  int
	comm string
}

func newSockOwners(fs hostfs.FS) *sockOwners {
	return &sockOwners{fs: fs, byIno: map[uint64]owner{}, seenMiss: map[uint64]bool{}}
}

func (s *sockOwners) lookup(ino uint64) (int, string) {
	if ino == 0 {
		return 0, ""
	}
	if o, ok := s.byIno[ino]; ok {
		return o.pid, o.comm
	}
	if time.Since(s.lastScan) > 200*time.Millisecond {
		s.scan()
		if o, ok := s.byIno[ino]; ok {
			return o.pid, o.comm
		}
	}
	if !s.seenMiss[ino] {
		s.seenMiss[ino] = true
		s.unresolved++
	}
	return 0, ""
}

func (s *sockOwners) scan() {
	s.lastScan = time.Now()
	procs, err := s.fs.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + p.Name() + "/fd"
		fds, err := s.fs.ReadDir(dir)
		if err != nil {
			continue
		}
		var comm string
		for _, fd := range fds {
			l, err := s.fs.LinkBase(dir + "/" + fd.Name())
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]"), 10, 64)
			if err != nil {
				continue
			}
			if _, ok := s.byIno[ino]; ok {
				continue
			}
			if comm == "" {
				c, _ := s.fs.ReadString("/proc/" + p.Name() + "/comm")
				comm = strings.TrimSpace(c)
			}
			s.byIno[ino] = owner{pid, comm}
			if s.seenMiss[ino] {
				delete(s.seenMiss, ino)
				s.unresolved--
			}
		}
	}
}
