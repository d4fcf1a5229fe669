package trace

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/perflab/perflab/internal/bpf"
	"github.com/perflab/perflab/internal/flame/folded"
	"github.com/perflab/perflab/internal/hostfs"
)

// LockOptions selects what `profile --locks` records.
type LockOptions struct {
	PID      int
	Duration time.Duration
	MinBlock time.Duration
	Ready    func()
}

// LockWait is the time threads spent waiting on one futex (lock address)
// from one user stack.
type LockWait struct {
	PID     int           `json:"pid"`
	Comm    string        `json:"comm"`
	Address string        `json:"lock_address"`
	Stack   []string      `json:"stack"` // root first
	Total   time.Duration `json:"total_ns"`
	Count   uint64        `json:"waits"`
	Max     time.Duration `json:"max_ns"`
}

// Locks is a recorded lock-wait profile.
type Locks struct {
	Waits   []LockWait // longest total first
	Profile *folded.Profile
	Elapsed time.Duration
}

// RecordLocks traces futex waits (FUTEX_WAIT, WAIT_BITSET, LOCK_PI…), the
// slow path of pthread mutexes, condition variables, Java monitors parked
// threads and Go's runtime locks: whatever the language, a thread that
// blocks on a lock waits in futex().
func RecordLocks(ctx context.Context, fs hostfs.FS, o LockOptions) (*Locks, error) {
	if err := Ready(fs, Needs{Tracefs: true}); err != nil {
		return nil, err
	}
	if !haveTracepoint(fs, "syscalls", "sys_enter_futex") {
		return nil, loadErr("locks", fmt.Errorf("the kernel has no syscalls:sys_enter_futex tracepoint (needs CONFIG_FTRACE_SYSCALLS=y)"))
	}
	spec, err := bpf.LoadFutex()
	if err != nil {
		return nil, loadErr("locks", err)
	}
	if err := setConst(spec, bpf.FutexVarTargetTgid, uint32(o.PID)); err != nil {
		return nil, loadErr("locks", err)
	}
	if err := setConst(spec, bpf.FutexVarMinBlockNs, uint64(o.MinBlock)); err != nil {
		return nil, loadErr("locks", err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		return nil, loadErr("locks", err)
	}
	defer coll.Close()
	var ls links
	defer func() { ls.Close() }()
	for name, tp := range map[string]string{bpf.FutexProgFutexEnter: "sys_enter_futex", bpf.FutexProgFutexExit: "sys_exit_futex"} {
		l, err := link.Tracepoint("syscalls", tp, coll.Programs[name], nil)
		if err != nil {
			return nil, loadErr("locks", err)
		}
		ls = append(ls, l)
	}
	start := time.Now()
	if o.Ready != nil {
		o.Ready()
	}
	wait(ctx, o.Duration)
	ls.Close()
	ls = nil
	elapsed := time.Since(start)

	sy := newSymbolizer(fs)
	st := &stackReader{m: coll.Maps[bpf.FutexMapFstacks]}
	res := &Locks{Elapsed: elapsed}
	counts := map[string]uint64{}
	var k bpf.FutexLockwaitKey
	var v bpf.FutexLockwaitVal
	it := coll.Maps[bpf.FutexMapWaits].Iterate()
	for it.Next(&k, &v) {
		w := LockWait{PID: int(k.Tgid), Comm: commString(k.Comm[:]), Address: fmt.Sprintf("%#x", k.Uaddr),
			Stack: st.user(sy, k.Tgid, k.Ustack), Total: time.Duration(v.Ns), Count: v.Count, Max: time.Duration(v.MaxNs)}
		res.Waits = append(res.Waits, w)
		frames := append([]string{w.Comm, "lock " + w.Address}, w.Stack...)
		counts[strings.Join(frames, ";")] += v.Ns
	}
	if err := it.Err(); err != nil {
		return nil, loadErr("locks", err)
	}
	sort.Slice(res.Waits, func(i, j int) bool {
		if res.Waits[i].Total != res.Waits[j].Total {
			return res.Waits[i].Total > res.Waits[j].Total
		}
		return res.Waits[i].Address < res.Waits[j].Address
	})
	res.Profile = foldedFrom(counts)
	return res, nil
}
