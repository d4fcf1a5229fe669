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

func TestReadRejects(t *testing.T) {
	for _, in := range []string{"", "\n\n", "a;b\n", "a;b x\n", "a;b -1\n", "a;b 1\nnot a stack\n", " 5\n"} {
		_, err := Read(strings.NewReader(in))
		if err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	_, err := Read(strings.NewReader("ok 1\nbad line\n"))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != 2 {
		t.Fatalf("error should name line 2: %v", err)
	}
}

// FuzzRead: no panic, and what Read accepts writes back to text that reads
// to the same profile.
func FuzzRead(f *testing.F) {
	f.Add("a;b 1\nc 2\n")
	f.Add("a;b 1 2\n")
	f.Add("x 18446744073709551615\n")
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
		if len(p.Stacks) != len(q.Stacks) || p.Diff != q.Diff {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v", p, q)
		}
		for i := range p.Stacks {
			if p.Stacks[i] != q.Stacks[i] {
				t.Fatalf("stack %d: %+v vs %+v", i, p.Stacks[i], q.Stacks[i])
			}
		}
	})
}
