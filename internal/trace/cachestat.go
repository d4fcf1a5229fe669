package trace

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/perflab/perflab/internal/bpf"
	"github.com/perflab/perflab/internal/hostfs"
)

// CacheOptions selects what `trace cachestat` records.
type CacheOptions struct {
	Duration time.Duration // 0: until ctx ends
	Interval time.Duration
	Top      int                 // cgroups and files listed; 0: 5
	Ready    func(probes string) // called once attached
	Each     func(CacheInterval) // called after each interval
}

// CacheCounts are page-cache counters over some time.
type CacheCounts struct {
	Accesses uint64 `json:"accesses"`
	Hits     uint64 `json:"hits"`
	Misses   uint64 `json:"misses"`
	Dirtied  uint64 `json:"dirtied"`
	// RatioPct is hits/accesses in percent; nil when nothing was accessed.
	RatioPct *float64 `json:"hit_ratio_pct"`
}

// CacheInterval is one line of output.
type CacheInterval struct {
	Time time.Time `json:"time"`
	CacheCounts
	// PgpginPages is /proc/vmstat pgpgin over the interval, in pages: what
	// block devices read, the kernel's own count to hold misses against.
	PgpginPages uint64 `json:"vmstat_pgpgin_pages"`
}

// CacheGroup is the total for one cgroup or file.
type CacheGroup struct {
	Name string `json:"name"`
	CacheCounts
}

// CacheReport is the result.
type CacheReport struct {
	Probes    string          `json:"probes"`
	Unit      string          `json:"unit"` // "pages" or "folios"
	Seconds   float64         `json:"seconds"`
	Intervals []CacheInterval `json:"intervals"`
	Total     CacheInterval   `json:"total"`
	Cgroups   []CacheGroup    `json:"cgroups"`
	Files     []CacheGroup    `json:"files"`
	Notes     []string        `json:"notes,omitempty"`
}

// raw is the kernel's counters summed over CPUs.
type raw struct{ accessed, added, addedPages, dirtied uint64 }

func (r raw) sub(o raw) raw {
	return raw{r.accessed - o.accessed, r.added - o.added, r.addedPages - o.addedPages, r.dirtied - o.dirtied}
}

// counts interprets raw counters: a miss is a page (tracepoints) or folio
// (kprobes) inserted into the cache; a hit an access that needed none.
// Readahead inserts pages before they are asked for, so within one interval
// misses can exceed accesses; hits are then 0, never negative.
func (r raw) counts(pages bool) CacheCounts {
	miss := r.added
	if pages {
		miss = r.addedPages
	}
	c := CacheCounts{Accesses: r.accessed, Misses: miss, Dirtied: r.dirtied}
	if r.accessed > miss {
		c.Hits = r.accessed - miss
	}
	if r.accessed > 0 {
		v := 100 * float64(c.Hits) / float64(r.accessed)
		c.RatioPct = &v
	}
	return c
}

func sumVals(vs []bpf.CachestatCacheVal) raw {
	var r raw
	for _, v := range vs {
		r.accessed += v.Accessed
		r.added += v.Added
		r.addedPages += v.AddedPages
		r.dirtied += v.Dirtied
	}
	return r
}

// CacheCounter is the attached page-cache probes: start it once, take
// snapshots whenever, subtract two to get counts. Cachestat drives it; the
// bench monitor can too.
type CacheCounter struct {
	fs     hostfs.FS
	coll   *ebpf.Collection
	ls     links
	Probes string   // which kernel probes count
	Unit   string   // "pages", or "folios" on kernels before 6.10
	Notes  []string // what is not counted
}

// CacheSnapshot is the counters at one moment.
type CacheSnapshot struct {
	k      raw
	pgpgin uint64 // KiB
}

// StartCacheCounter checks the kernel, loads and attaches the probes.
func StartCacheCounter(fs hostfs.FS) (*CacheCounter, error) {
	if err := Ready(fs, Needs{Tracefs: true}); err != nil {
		return nil, err
	}
	if !haveTracepoint(fs, "filemap", "mm_filemap_add_to_page_cache") {
		return nil, loadErr("cachestat", fmt.Errorf("the kernel has no filemap:mm_filemap_add_to_page_cache tracepoint"))
	}
	spec, err := bpf.LoadCachestat()
	if err != nil {
		return nil, loadErr("cachestat", err)
	}
	c := &CacheCounter{fs: fs, Unit: "pages"}
	access := c.chooseProbes(spec)
	if c.coll, err = ebpf.NewCollection(spec); err != nil {
		return nil, loadErr("cachestat", err)
	}
	if err := c.attach(access); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// chooseProbes picks the access probes by what the kernel has, removes the
// others from spec and returns the programs to attach.
func (c *CacheCounter) chooseProbes(spec *ebpf.CollectionSpec) []string {
	var access []string
	switch {
	case haveTracepoint(c.fs, "filemap", "mm_filemap_get_pages"):
		c.Probes = "tracepoints filemap:mm_filemap_get_pages, mm_filemap_fault, mm_filemap_add_to_page_cache"
		access = []string{bpf.CachestatProgFilemapGetPages, bpf.CachestatProgFilemapFault}
		delete(spec.Programs, bpf.CachestatProgFolioMarkAccessed)
		delete(spec.Programs, bpf.CachestatProgMarkPageAccessed)
		return access
	case haveFunc("folio_mark_accessed"):
		c.Probes = "kprobe folio_mark_accessed, tracepoint filemap:mm_filemap_add_to_page_cache"
		access = []string{bpf.CachestatProgFolioMarkAccessed}
		delete(spec.Programs, bpf.CachestatProgMarkPageAccessed)
	default:
		c.Probes = "kprobe mark_page_accessed, tracepoint filemap:mm_filemap_add_to_page_cache"
		access = []string{bpf.CachestatProgMarkPageAccessed}
		delete(spec.Programs, bpf.CachestatProgFolioMarkAccessed)
	}
	c.Unit = "folios"
	c.Notes = append(c.Notes, "this kernel has no filemap:mm_filemap_get_pages tracepoint (6.10+): accesses are mark-accessed calls and misses folio insertions, both in folios")
	delete(spec.Programs, bpf.CachestatProgFilemapGetPages)
	delete(spec.Programs, bpf.CachestatProgFilemapFault)
	return access
}

func (c *CacheCounter) attach(access []string) error {
	for _, name := range access {
		var l link.Link
		var err error
		switch name {
		case bpf.CachestatProgFilemapGetPages:
			l, err = link.Tracepoint("filemap", "mm_filemap_get_pages", c.coll.Programs[name], nil)
		case bpf.CachestatProgFilemapFault:
			l, err = link.Tracepoint("filemap", "mm_filemap_fault", c.coll.Programs[name], nil)
		default:
			l, err = link.Kprobe(name, c.coll.Programs[name], nil)
		}
		if err != nil {
			return loadErr("cachestat", fmt.Errorf("attaching %s: %w", name, err))
		}
		c.ls = append(c.ls, l)
	}
	l, err := link.Tracepoint("filemap", "mm_filemap_add_to_page_cache", c.coll.Programs[bpf.CachestatProgFilemapAdd], nil)
	if err != nil {
		return loadErr("cachestat", err)
	}
	c.ls = append(c.ls, l)
	dirty := "writeback_dirty_folio"
	if !haveTracepoint(c.fs, "writeback", dirty) {
		dirty = "writeback_dirty_page"
	}
	if l, err := link.Tracepoint("writeback", dirty, c.coll.Programs[bpf.CachestatProgDirtyFolio], nil); err == nil {
		c.ls = append(c.ls, l)
	} else {
		c.Notes = append(c.Notes, "dirtied pages not counted: "+firstLine(err))
	}
	return nil
}

// Close detaches the probes and frees the maps.
func (c *CacheCounter) Close() {
	c.ls.Close()
	c.ls = nil
	if c.coll != nil {
		c.coll.Close()
	}
}

// Snapshot reads the counters summed over cgroups and CPUs, and pgpgin.
func (c *CacheCounter) Snapshot() CacheSnapshot {
	var r raw
	var k uint64
	var vs []bpf.CachestatCacheVal
	it := c.coll.Maps[bpf.CachestatMapCache].Iterate()
	for it.Next(&k, &vs) {
		s := sumVals(vs)
		r.accessed += s.accessed
		r.added += s.added
		r.addedPages += s.addedPages
		r.dirtied += s.dirtied
	}
	return CacheSnapshot{k: r, pgpgin: pgpgin(c.fs)}
}

// Between is the interval from a to b (a taken first).
func (c *CacheCounter) Between(a, b CacheSnapshot, at time.Time) CacheInterval {
	return CacheInterval{Time: at, CacheCounts: b.k.sub(a.k).counts(c.Unit == "pages"), PgpginPages: (b.pgpgin - a.pgpgin) / pageKiB()}
}

// Cachestat measures the page-cache hit ratio per interval.
func Cachestat(ctx context.Context, fs hostfs.FS, o CacheOptions) (*CacheReport, error) {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Top == 0 {
		o.Top = 5
	}
	c, err := StartCacheCounter(fs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rep := &CacheReport{Probes: c.Probes, Unit: c.Unit, Intervals: []CacheInterval{}}
	if o.Ready != nil {
		o.Ready(rep.Probes)
	}
	start := time.Now()
	first := c.Snapshot()
	prev, last := first, start
	emit := func(now time.Time) {
		cur := c.Snapshot()
		iv := c.Between(prev, cur, now)
		prev, last = cur, now
		rep.Intervals = append(rep.Intervals, iv)
		if o.Each != nil {
			o.Each(iv)
		}
	}
	tickUntil(ctx, o.Interval, o.Duration, emit)
	if now := time.Now(); now.Sub(last) > o.Interval/10 {
		emit(now)
	} else {
		prev = c.Snapshot()
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.Total = c.Between(first, prev, time.Now())
	pages := c.Unit == "pages"
	rep.Cgroups = topCgroups(fs, c.coll.Maps[bpf.CachestatMapCache], o.Top, pages)
	rep.Files = topFiles(fs, c.coll.Maps[bpf.CachestatMapFiles], o.Top, pages)
	rep.Notes = append(rep.Notes, c.Notes...)
	return rep, nil
}

// tickUntil calls f every interval until d has passed (0: forever) or ctx
// ends.
func tickUntil(ctx context.Context, interval, d time.Duration, f func(time.Time)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var end <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		end = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-end:
			return
		case now := <-tick.C:
			f(now)
		}
	}
}

func pageKiB() uint64 { return uint64(os.Getpagesize() / 1024) }

// pgpgin is /proc/vmstat's pgpgin (KiB read from block devices).
func pgpgin(fs hostfs.FS) uint64 {
	s, err := fs.ReadString("/proc/vmstat")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, "pgpgin "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func topCgroups(fs hostfs.FS, m *ebpf.Map, top int, pages bool) []CacheGroup {
	var k uint64
	var vs []bpf.CachestatCacheVal
	byID := map[uint64]raw{}
	it := m.Iterate()
	for it.Next(&k, &vs) {
		byID[k] = sumVals(vs)
	}
	names := cgroupPaths(fs)
	out := []CacheGroup{}
	for id, r := range byID {
		name, ok := names[id]
		if !ok {
			name = fmt.Sprintf("cgroup id %d", id)
		}
		out = append(out, CacheGroup{Name: name, CacheCounts: r.counts(pages)})
	}
	return topGroups(out, top)
}

func topGroups(out []CacheGroup, top int) []CacheGroup {
	sort.Slice(out, func(i, j int) bool {
		if out[i].Accesses+out[i].Misses != out[j].Accesses+out[j].Misses {
			return out[i].Accesses+out[i].Misses > out[j].Accesses+out[j].Misses
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > top {
		out = out[:top]
	}
	return out
}

// cgroupPaths maps cgroup v2 ids (the directory's inode number) to paths
// under the v2 hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified on
// hybrid hosts).
func cgroupPaths(fs hostfs.FS) map[uint64]string {
	out := map[uint64]string{}
	for _, root := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if !fs.Exists(root+"/cgroup.controllers") && !fs.Exists(root+"/cgroup.procs") {
			continue
		}
		if root == "/sys/fs/cgroup" && fs.Exists("/sys/fs/cgroup/unified/cgroup.procs") {
			continue
		}
		base := fs.Path(root)
		_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			fi, err := os.Stat(p)
			if err != nil {
				return nil
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				rel := strings.TrimPrefix(p, base)
				if rel == "" {
					rel = "/"
				}
				out[st.Ino] = rel
			}
			return nil
		})
		break
	}
	return out
}

func topFiles(fs hostfs.FS, m *ebpf.Map, top int, pages bool) []CacheGroup {
	var k bpf.CachestatFileKey
	var vs []bpf.CachestatCacheVal
	type fk struct {
		dev uint32
		ino uint64
	}
	all := []CacheGroup{}
	keys := map[string]fk{}
	it := m.Iterate()
	for it.Next(&k, &vs) {
		name := fmt.Sprintf("dev %d:%d inode %d", k.Dev>>20, k.Dev&0xfffff, k.Ino)
		keys[name] = fk{k.Dev, k.Ino}
		all = append(all, CacheGroup{Name: name, CacheCounts: sumVals(vs).counts(pages)})
	}
	all = topGroups(all, top)
	want := map[fk]int{}
	for i, g := range all {
		want[keys[g.Name]] = i
	}
	// Name the top files through open file descriptors where a process
	// still has them open.
	procs, _ := fs.ReadDir("/proc")
	for _, p := range procs {
		if len(want) == 0 {
			break
		}
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		dir := "/proc/" + p.Name() + "/fd"
		fds, _ := fs.ReadDir(dir)
		for _, fd := range fds {
			fi, err := os.Stat(fs.Path(dir + "/" + fd.Name()))
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok {
				continue
			}
			kdev := uint32(major(st.Dev))<<20 | uint32(minor(st.Dev))
			if i, ok := want[fk{kdev, st.Ino}]; ok {
				if t, err := os.Readlink(fs.Path(dir + "/" + fd.Name())); err == nil {
					all[i].Name = t
				}
				delete(want, fk{kdev, st.Ino})
			}
		}
	}
	return all
}

func major(dev uint64) uint64 { return ((dev >> 8) & 0xfff) | ((dev >> 32) &^ 0xfff) }
func minor(dev uint64) uint64 { return (dev & 0xff) | ((dev >> 12) &^ 0xff) }

// ratio formats a hit ratio for text output.
func ratio(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *p)
}
