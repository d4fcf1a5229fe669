package fold

import "hash/maphash"

// byteSet is a set of byte strings kept end to end in one arena and
// numbered in the order they were added, with an open-addressing hash
// index over them. Unlike a map[string]uint32 it allocates nothing per
// string and keeps each string once; the index holds 8 bytes per slot
// (the hash's upper half as a tag, and the number), so a lookup touches
// one slot and, when the tags match, the arena.
type byteSet struct {
	text   []byte
	ends   []int    // string i is text[ends[i]:ends[i+1]]
	hashes []uint64 // string i's hash, to rebuild the index when it grows
	slots  []uint64 // tag<<32 | i+1; 0 is empty
	seed   maphash.Seed
}

func newByteSet(size int) *byteSet {
	n := 16
	for n < 2*size {
		n *= 2
	}
	return &byteSet{
		text:   make([]byte, 0, 64*size),
		ends:   append(make([]int, 0, size+1), 0),
		hashes: make([]uint64, 0, size),
		slots:  make([]uint64, n),
		seed:   maphash.MakeSeed(),
	}
}

func (s *byteSet) len() int { return len(s.hashes) }

func (s *byteSet) at(i uint32) []byte { return s.text[s.ends[i]:s.ends[i+1]] }

func (s *byteSet) hash(b []byte) uint64 { return maphash.Bytes(s.seed, b) }

// find returns the number of b, whose hash is h.
func (s *byteSet) find(b []byte, h uint64) (uint32, bool) {
	mask := uint64(len(s.slots) - 1)
	tag := h &^ 0xffffffff
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return 0, false
		}
		if v&^0xffffffff == tag {
			id := uint32(v) - 1
			if string(s.at(id)) == string(b) {
				return id, true
			}
		}
	}
}

// add stores b, not present, whose hash is h, and returns its number.
func (s *byteSet) add(b []byte, h uint64) uint32 {
	if 2*(len(s.hashes)+1) > len(s.slots) {
		s.grow()
	}
	id := uint32(len(s.hashes))
	if len(s.text)+len(b) > cap(s.text) {
		// Double: append grows large slices by a quarter, copying the
		// arena over and over.
		t := make([]byte, len(s.text), 2*cap(s.text)+len(b)+4096)
		copy(t, s.text)
		s.text = t
	}
	s.text = append(s.text, b...)
	s.ends = append(s.ends, len(s.text))
	s.hashes = append(s.hashes, h)
	s.put(h, id)
	return id
}

func (s *byteSet) put(h uint64, id uint32) {
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = h&^0xffffffff | uint64(id+1)
}

func (s *byteSet) grow() {
	s.slots = make([]uint64, 2*len(s.slots))
	for id, h := range s.hashes {
		s.put(h, uint32(id))
	}
}
