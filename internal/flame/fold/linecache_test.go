package fold

import (
	"fmt"
	"strings"
	"testing"
)

// TestLineCacheRecords: every key added is found again with its segment,
// through many doublings of the index; predictions and the last line's
// prefix are kept per entry, and a prefix too long to keep (or none)
// leaves the entry without a whole line to recognise.
func TestLineCacheRecords(t *testing.T) {
	c := newLineCache(16)
	const n = 40000
	ents := make([]uint32, n)
	key := func(i int) []byte {
		return []byte(fmt.Sprintf("f%d+0x%x (%s)", i, i, strings.Repeat("m", i%37)))
	}
	for i := range n {
		k := key(i)
		if _, ok := c.find(k, c.hash(k)); ok {
			t.Fatalf("key %d found before it was added", i)
		}
		e, ok := c.add(k, c.hash(k), uint32(i))
		if !ok || e == noEntry {
			t.Fatalf("key %d not added", i)
		}
		ents[i] = e
	}
	for i := range n {
		k := key(i)
		e, ok := c.find(k, c.hash(k))
		if !ok || e != ents[i] || c.seg(e) != uint32(i) || string(c.key(e)) != string(k) {
			t.Fatalf("key %d: entry %d (%v), want %d with segment %d", i, e, ok, ents[i], i)
		}
		if n0, n1 := c.next(e); n0 != noEntry || n1 != noEntry || c.line(e) != nil {
			t.Fatalf("key %d: a new entry has predictions %d, %d or a line %q", i, n0, n1, c.line(e))
		}
	}
	e := ents[7]
	c.setNext(e, ents[1], ents[2])
	if n0, n1 := c.next(e); n0 != ents[1] || n1 != ents[2] {
		t.Fatalf("predictions %d, %d", n0, n1)
	}
	for _, prefix := range []string{"\t    ffffffff81000000 ", "\t 1 ", strings.Repeat(" ", maxPrefix)} {
		c.setPrefix(e, []byte(prefix))
		if got := string(c.line(e)); got != prefix+string(key(7)) {
			t.Fatalf("line %q, want %q", got, prefix+string(key(7)))
		}
		if c.seg(e) != 7 || string(c.key(ents[8])) != string(key(8)) {
			t.Fatal("setting a prefix overwrote a neighbour")
		}
	}
	for _, prefix := range []string{"", strings.Repeat(" ", maxPrefix+1)} {
		c.setPrefix(e, []byte(prefix))
		if c.line(e) != nil {
			t.Fatalf("prefix of %d bytes: line %q, want none", len(prefix), c.line(e))
		}
	}
	if string(c.key(e)) != string(key(7)) {
		t.Fatal("the key changed")
	}
}

// TestHugeFrameLineIsNotCached: a frame line too long for a record is
// folded without being cached, the same every time it appears.
func TestHugeFrameLineIsNotCached(t *testing.T) {
	sym := strings.Repeat("s", 1<<24)
	sample := "app 1 [000] 1.0: 1 cpu-clock:\n" +
		"\t    ffffffff81000000 " + sym + "+0x1 (/bin/app)\n" +
		"\t    ffffffff81000001 main+0x2 (/bin/app)\n\n"
	// Two threads: the first sample is folded serially, the second by a
	// worker.
	want := "app;main;" + sym + " 2\n"
	if got := foldWith(t, []byte(sample+sample), Options{}, 2, blockSize); string(got) != want {
		t.Fatalf("%d bytes folded, want %d", len(got), len(want))
	}
}
