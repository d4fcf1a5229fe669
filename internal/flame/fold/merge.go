package fold

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/perflab/perflab/internal/flame/folded"
)

// absorb adds w's stacks to f's: w's segments and root frames are
// interned in f (equal text, one id), so its stack keys can be rewritten
// in f's ids and counted in f's stack set. Merging by ids, not by text,
// lets the folded text of each unique stack be built, and sorted, once.
func (f *folder) absorb(w *folder) {
	segMap := make([]uint32, w.segs.len())
	for i := range segMap {
		segMap[i] = f.intern(w.segs.at(uint32(i)))
	}
	pnMap := make([]uint32, len(w.pnameOf))
	for i, p := range w.pnameOf {
		id, ok := f.pnames[string(p)]
		if !ok {
			id = uint32(len(f.pnameOf))
			f.pnames[string(p)] = id
			f.pnameOf = append(f.pnameOf, p)
		}
		pnMap[i] = id
	}
	for i, n := range w.counts {
		k := w.stackSet.at(uint32(i))
		key := binary.LittleEndian.AppendUint32(f.key[:0], pnMap[binary.LittleEndian.Uint32(k)])
		for j := 4; j < len(k); j += 4 {
			key = binary.LittleEndian.AppendUint32(key, segMap[binary.LittleEndian.Uint32(k[j:])])
		}
		f.key = key
		f.count(key, n)
	}
}

// count adds n samples to the stack whose key is k and returns its number.
func (f *folder) count(k []byte, n uint64) uint32 {
	h := f.stackSet.hash(k)
	if i, ok := f.stackSet.find(k, h); ok {
		f.counts[i] += n
		return i
	}
	f.counts = append(f.counts, n)
	return f.stackSet.add(k, h)
}

// stackEntry is a unique stack being sorted: its ids root first (the root
// frame's, then its segments'), its folded text and its count.
type stackEntry struct {
	ids   []uint32
	text  string
	count uint64
}

// stacks returns the folded text and count of every unique stack this
// folder interned, sorted, with stacks whose text is equal (lines that
// differ only in what cleaning removes, such as offsets) summed.
//
// The texts are built into one string (one allocation, each stack a
// substring of it). With parallel, two goroutines build it and sort. Sorting compares ids first: two stacks share their
// text up to the first component whose id differs, so the byte
// comparison starts there instead of at the stacks' long common root.
func (f *folder) stacks(parallel bool) []folded.Stack {
	n := len(f.counts)
	if n == 0 {
		return nil
	}
	segLen := make([]int, f.segs.len())
	for i := range segLen {
		segLen[i] = len(f.segs.at(uint32(i)))
	}
	// Where each stack's text and ids go: one pass over the keys for the
	// lengths, then the texts written into one buffer, by two goroutines
	// with parallel (each its half of the stacks, at known offsets).
	textEnd := make([]int, n)
	idEnd := make([]int, n)
	total, comps := 0, 0
	for i := range n {
		k := f.stackSet.at(uint32(i))
		total += len(f.pnameOf[binary.LittleEndian.Uint32(k)])
		for j := 4; j < len(k); j += 4 {
			total += 1 + segLen[binary.LittleEndian.Uint32(k[j:])]
		}
		comps += len(k) / 4
		textEnd[i], idEnd[i] = total, comps
	}
	buf := make([]byte, total)
	ids := make([]uint32, comps)
	entries := make([]stackEntry, n)
	// build writes stacks lo…hi-1. The buffer is written here only, and
	// read as one string (no copy) once both halves are done.
	all := unsafe.String(unsafe.SliceData(buf), total)
	build := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k := f.stackSet.at(uint32(i))
			t, d := 0, 0
			if i > 0 {
				t, d = textEnd[i-1], idEnd[i-1]
			}
			e := &entries[i]
			e.ids, e.text, e.count = ids[d:idEnd[i]:idEnd[i]], all[t:textEnd[i]], f.counts[i]
			p := binary.LittleEndian.Uint32(k)
			ids[d] = p
			d++
			t += copy(buf[t:], f.pnameOf[p])
			for j := len(k) - 4; j >= 4; j -= 4 {
				id := binary.LittleEndian.Uint32(k[j:])
				ids[d] = id
				d++
				buf[t] = ';'
				t += 1 + copy(buf[t+1:], f.segs.at(id))
			}
		}
	}
	if parallel {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			build(0, n/2)
		}()
		build(n/2, n)
		wg.Wait()
	} else {
		build(0, n)
	}
	pnLen := make([]int, len(f.pnameOf))
	for i, p := range f.pnameOf {
		pnLen[i] = len(p)
	}
	cmp := func(a, b stackEntry) int { return f.compareStacks(&a, &b, pnLen, segLen) }
	out := make([]folded.Stack, 0, n)
	add := func(e stackEntry) {
		if m := len(out); m > 0 && out[m-1].Frames == e.text {
			out[m-1].Count += e.count
			return
		}
		out = append(out, folded.Stack{Frames: e.text, Count: e.count})
	}
	if !parallel {
		slices.SortFunc(entries, cmp)
		for _, e := range entries {
			add(e)
		}
		return out
	}
	// Two halves sorted at once on the two cores the workers used, then
	// merged: the sort is most of this serial tail of a parallel fold.
	lo, hi := entries[:n/2], entries[n/2:]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.SortFunc(lo, cmp)
	}()
	slices.SortFunc(hi, cmp)
	wg.Wait()
	for len(lo) > 0 && len(hi) > 0 {
		if cmp(lo[0], hi[0]) <= 0 {
			add(lo[0])
			lo = lo[1:]
		} else {
			add(hi[0])
			hi = hi[1:]
		}
	}
	for _, e := range lo {
		add(e)
	}
	for _, e := range hi {
		add(e)
	}
	return out
}

// compareStacks orders two stacks as their texts compare. Their texts are
// equal up to the start of the first component whose id differs (equal
// ids, equal texts). There the two components' own texts, in the small
// segment and root tables, decide unless one is a prefix of the other;
// only then are the stacks' texts compared, from that component on (or
// from the last common one when one stack's ids are a prefix of the
// other's). The common ids are skipped without looking at their texts:
// stacks that sort next to each other share long roots.
func (f *folder) compareStacks(a, b *stackEntry, pnLen, segLen []int) int {
	n := min(len(a.ids), len(b.ids))
	ai, bi := a.ids[:n], b.ids[:n]
	i := 0
	for i < n && ai[i] == bi[i] {
		i++
	}
	from := i // the text is compared from component from on
	if i < n {
		var ca, cb []byte
		if i == 0 {
			ca, cb = f.pnameOf[ai[0]], f.pnameOf[bi[0]]
		} else {
			ca, cb = f.segs.at(ai[i]), f.segs.at(bi[i])
		}
		m := min(len(ca), len(cb))
		if c := bytes.Compare(ca[:m], cb[:m]); c != 0 {
			return c
		}
	} else if from > 0 {
		from--
	}
	off := 0
	for k, id := range ai[:from] {
		if k == 0 {
			off += pnLen[id] + 1
		} else {
			off += segLen[id] + 1
		}
	}
	return strings.Compare(a.text[off:], b.text[off:])
}
