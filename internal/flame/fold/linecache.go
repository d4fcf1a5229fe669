package fold

import (
	"encoding/binary"
	"hash/maphash"
)

// lineCache holds the cleaned frame lines of samples whose root frame
// does (java) or does not start with "java". A frame line is looked up
// once or more per line of input, so each distinct line key is one
// record, its fields and its bytes side by side in one arena:
//
//	seg, next0, next1 uint32; len uint32 (key length <<8 | prefix length)
//	24 bytes holding, right-aligned, the prefix (blanks and address) of
//	the last line seen with this key; the key's bytes, padded to 4
//
// seg is the segment id (or dropped), next0 and next1 the entries that
// followed this one last (or noEntry). An entry is named by its record's
// offset divided by 4. A lookup touches its slot, then one record. The
// prefix and the key are the whole last line seen, contiguous, so that
// a line predicted to follow can be recognised in the input by one
// comparison, before its end is even looked for.
type lineCache struct {
	rec   []byte
	slots []uint64 // tag<<32 | entry+1; 0 is empty
	n     int      // entries
	seed  maphash.Seed
}

const (
	recHeader = 16
	maxPrefix = 24 // longer prefixes (odd spacing) are not kept
	recKey    = recHeader + maxPrefix
)

// maxRec bounds the arena so that an entry (offset/4) fits in a uint32
// below noEntry; past it, lines are cleaned without being cached.
const maxRec = 1<<34 - 8

func newLineCache(size int) lineCache {
	n := 16
	for n < 2*size {
		n *= 2
	}
	return lineCache{rec: make([]byte, 0, size*128), slots: make([]uint64, n), seed: maphash.MakeSeed()}
}

func (c *lineCache) hash(b []byte) uint64 { return maphash.Bytes(c.seed, b) }

func (c *lineCache) key(e uint32) []byte {
	o := int(e) * 4
	n := int(binary.LittleEndian.Uint32(c.rec[o+12:]) >> 8)
	return c.rec[o+recKey : o+recKey+n]
}

// line returns the last whole line seen with entry e's key (empty if its
// prefix was too long to keep).
func (c *lineCache) line(e uint32) []byte {
	o := int(e) * 4
	v := binary.LittleEndian.Uint32(c.rec[o+12:])
	p := int(v & 0xff)
	if p == 0 {
		return nil
	}
	return c.rec[o+recKey-p : o+recKey+int(v>>8)]
}

// setPrefix records prefix as that of the last line seen with entry e's key.
func (c *lineCache) setPrefix(e uint32, prefix []byte) {
	o := int(e) * 4
	v := binary.LittleEndian.Uint32(c.rec[o+12:])
	if len(prefix) > maxPrefix || len(prefix) == 0 {
		binary.LittleEndian.PutUint32(c.rec[o+12:], v&^0xff)
		return
	}
	if int(v&0xff) == len(prefix) && string(c.rec[o+recKey-len(prefix):o+recKey]) == string(prefix) {
		return
	}
	copy(c.rec[o+recKey-len(prefix):], prefix)
	binary.LittleEndian.PutUint32(c.rec[o+12:], v&^0xff|uint32(len(prefix)))
}

func (c *lineCache) seg(e uint32) uint32 { return binary.LittleEndian.Uint32(c.rec[int(e)*4:]) }

func (c *lineCache) next(e uint32) (n0, n1 uint32) {
	r := c.rec[int(e)*4+4 : int(e)*4+12]
	return binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint32(r[4:])
}

func (c *lineCache) setNext(e, n0, n1 uint32) {
	r := c.rec[int(e)*4+4 : int(e)*4+12]
	binary.LittleEndian.PutUint32(r, n0)
	binary.LittleEndian.PutUint32(r[4:], n1)
}

// find returns the entry whose key is b, whose hash is h.
func (c *lineCache) find(b []byte, h uint64) (uint32, bool) {
	mask := uint64(len(c.slots) - 1)
	tag := h &^ 0xffffffff
	for i := h & mask; ; i = (i + 1) & mask {
		v := c.slots[i]
		if v == 0 {
			return 0, false
		}
		if v&^0xffffffff == tag {
			e := uint32(v) - 1
			if string(c.key(e)) == string(b) {
				return e, true
			}
		}
	}
}

// add stores key b, not present, whose hash is h, with segment seg; ok is
// false when the arena is full.
func (c *lineCache) add(b []byte, h uint64, seg uint32) (e uint32, ok bool) {
	size := recKey + (len(b)+3)&^3
	o := len(c.rec)
	if uint64(o+size) > maxRec || len(b) >= 1<<24 {
		return noEntry, false
	}
	if 2*(c.n+1) > len(c.slots) {
		c.grow()
	}
	if o+size > cap(c.rec) {
		r := make([]byte, o, 2*cap(c.rec)+size+4096)
		copy(r, c.rec)
		c.rec = r
	}
	c.rec = c.rec[:o+size]
	r := c.rec[o:]
	binary.LittleEndian.PutUint32(r, seg)
	binary.LittleEndian.PutUint32(r[4:], noEntry)
	binary.LittleEndian.PutUint32(r[8:], noEntry)
	binary.LittleEndian.PutUint32(r[12:], uint32(len(b))<<8)
	copy(r[recKey:], b)
	e = uint32(o / 4)
	c.put(h, e)
	c.n++
	return e, true
}

func (c *lineCache) put(h uint64, e uint32) {
	mask := uint64(len(c.slots) - 1)
	i := h & mask
	for c.slots[i] != 0 {
		i = (i + 1) & mask
	}
	c.slots[i] = h&^0xffffffff | uint64(e+1)
}

// grow doubles the index, rehashing the keys from the records.
func (c *lineCache) grow() {
	c.slots = make([]uint64, 2*len(c.slots))
	for o := 0; o < len(c.rec); {
		n := int(binary.LittleEndian.Uint32(c.rec[o+12:]) >> 8)
		c.put(c.hash(c.rec[o+recKey:o+recKey+n]), uint32(o/4))
		o += recKey + (n+3)&^3
	}
}
