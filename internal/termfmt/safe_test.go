package termfmt

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSafeShowsEscapes: an imported label that would retitle, clear or
// rewrite the terminal is printed visibly; perflab's own styles pass.
func TestSafeShowsEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"label\x1b]0;pwned\x07":         "label^[]0;pwned^G",
		"\x1b[2J\x1b[Hclear":            "^[[2J^[[Hclear",
		"a\x1bc":                        "a^[c",
		"bell\x07 del\x7f":              "bell^G del^?",
		"c1\u009b31m":                   "c1\\u009b31m",
		"plain ünïcode\tand\nlines\r":   "plain ünïcode\tand\nlines\r",
		"\x1b[31mred\x1b[0m \x1b[2K ok": "\x1b[31mred\x1b[0m \x1b[2K ok",
		"\x1b[31;1":                     "^[[31;1",
	} {
		var b bytes.Buffer
		n, err := Safe(&b).Write([]byte(in))
		if err != nil || n != len(in) {
			t.Errorf("Write(%q) = %d, %v", in, n, err)
		}
		if b.String() != want {
			t.Errorf("Safe(%q) = %q, want %q", in, b.String(), want)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b]0;x\x07", "\x1b[31m", "\xc2\x9b", "ok"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		out := Sanitize(p)
		for i := 0; i < len(out); i++ {
			c := out[i]
			if c == 0x1b {
				if styleLen(out[i:]) == 0 {
					t.Fatalf("Sanitize(%q) left a bare ESC: %q", p, out)
				}
				continue
			}
			if (c < 0x20 && !strings.ContainsRune("\n\t\r", rune(c))) || c == 0x7f {
				t.Fatalf("Sanitize(%q) left control byte %#x: %q", p, c, out)
			}
		}
	})
}

// TestCleanMatchesByteRule: the block-at-a-time check agrees with the rule
// applied to each byte, for every byte value at every offset of a word
// and next to each neighbour that matters (0xc2 before C1 bytes), in
// inputs shorter and longer than the 32-byte blocks.
func TestCleanMatchesByteRule(t *testing.T) {
	slow := func(p []byte) bool {
		for i := range p {
			if dirty(p, i) {
				return false
			}
		}
		return true
	}
	for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65, 71} {
		for pos := range n {
			for c := range 256 {
				for _, next := range []byte{'a', 0x80, 0x9f, 0xa0} {
					p := bytes.Repeat([]byte("x"), n)
					p[pos] = byte(c)
					if pos+1 < n {
						p[pos+1] = next
					}
					if got, want := clean(p), slow(p); got != want {
						t.Fatalf("clean(%q) = %v, byte rule says %v", p, got, want)
					}
				}
			}
		}
	}
	// Runs of bytes near the edges, where borrows and carries between
	// the bytes of a word could mislead.
	edges := []byte{0, 0x1f, 0x20, 0x21, '\n', 0x7e, 0x7f, 0x80, 0x9f, 0xa0, 0xc2, 0xfe, 0xff, 'a'}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		p := make([]byte, 1+rng.IntN(100))
		for i := range p {
			p[i] = edges[rng.IntN(len(edges))]
		}
		if got, want := clean(p), slow(p); got != want {
			t.Fatalf("clean(%q) = %v, byte rule says %v", p, got, want)
		}
	}
}

// BenchmarkSanitizeClean: the cost a byte of ordinary output pays.
func BenchmarkSanitizeClean(b *testing.B) {
	p := bytes.Repeat([]byte("redis-server;[unknown];__libc_start_call_main;main;aeMain;aeProcessEvents 12345\n"), 1<<14)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		Sanitize(p)
	}
}
