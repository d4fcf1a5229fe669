package folded

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReadMergesSortsAndDetectsDiff(t *testing.T) {
	p, err := Read(strings.NewReader("b;x 2\r\na;y 1\n\nb;x 3\na;frame with spaces  4\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.WriteTo(&out)
	if want := "a;frame with spaces  4\na;y 1\nb;x 5\n"; out.String() != want || p.Diff || p.Total() != 10 {
		t.Fatalf("got %q (diff %v)", out.String(), p.Diff)
	}
	d, err := Read(strings.NewReader("a;b 3 7\na;c 0 2\n"))
	if err != nil || !d.Diff || d.TotalBefore() != 3 || d.Total() != 9 {
		t.Fatalf("diff profile: %+v %v", d, err)
	}
}

func TestReadRejectsInputWithoutStacks(t *testing.T) {
	for _, in := range []string{"", "\n\n", " 5\n"} {
		if _, err := Read(strings.NewReader(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	_, err := Read(strings.NewReader("\nGET / HTTP/1.1\nHost: x\n"))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != 2 || fe.Lines != 2 || fe.Text != "GET / HTTP/1.1" {
		t.Fatalf("error should name the first of 2 lines, line 2: %v", err)
	}
}

// Lines that are not "frames count" are skipped and counted, as
// flamegraph.pl ("Ignored N lines with invalid format") and inferno skip
// them; one bad line no longer loses the profile.
func TestReadSkipsMalformedLines(t *testing.T) {
	p, err := Read(strings.NewReader("ok 1\nbad line\nx;y 2.5.1\n\nx;z -1\n 5\nz 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.WriteTo(&out)
	if out.String() != "ok 1\nz 3\n" || p.Skipped != (Skipped{Lines: 4, First: 2, Text: "bad line"}) {
		t.Fatalf("got %q, skipped %+v", out.String(), p.Skipped)
	}
}

// Fractional counts are kept exactly, as flamegraph.pl keeps them.
func TestReadFractionalCounts(t *testing.T) {
	for _, c := range []struct {
		in, out string
		scale   int
	}{
		{"a;b 0.25\na;c 2\na;b 1.5\n", "a;b 1.75\na;c 2\n", 2},
		{"a 0.5\nb 3.\na 0.50\n", "a 1\nb 3\n", 0},            // halves merge into a whole
		{"a 0.1234567\nb 1\n", "a 0.123456\nb 1\n", MaxScale}, // places beyond MaxScale dropped
		{"a;b 1.5 2.25\n", "a;b 1.5 2.25\n", 2},               // differential
		{"a 1\nb 2.000\n", "a 1\nb 2\n", 0},
	} {
		p, err := Read(strings.NewReader(c.in))
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		var out bytes.Buffer
		p.WriteTo(&out)
		if out.String() != c.out || p.Scale != c.scale {
			t.Errorf("%q: got %q scale %d, want %q scale %d", c.in, out.String(), p.Scale, c.out, c.scale)
		}
	}
	p, _ := Read(strings.NewReader("a 0.25\nb 1\n"))
	if p.Total() != 125 || Value(p.Total(), p.Scale) != 1.25 {
		t.Fatalf("total %d at scale %d", p.Total(), p.Scale)
	}
}

// FuzzRead: no panic, and what Read accepts writes back to text that reads
// to the same profile.
func FuzzRead(f *testing.F) {
	f.Add("a;b 1\nc 2\n")
	f.Add("a;b 1 2\n")
	f.Add("x 18446744073709551615\n")
	f.Add("a 0.25\nb 1.5 2\nbad\n")
	f.Add("a 18446744073709551615\nb 0.5\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Read(strings.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := p.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		q, err := Read(&out)
		if err != nil {
			t.Fatalf("own output rejected: %v\n%q", err, out.String())
		}
		if len(p.Stacks) != len(q.Stacks) || p.Diff != q.Diff || p.Scale != q.Scale {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v", p, q)
		}
		for i := range p.Stacks {
			if p.Stacks[i] != q.Stacks[i] {
				t.Fatalf("stack %d: %+v vs %+v", i, p.Stacks[i], q.Stacks[i])
			}
		}
	})
}
