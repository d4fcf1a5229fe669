package knob_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/fixture"
	"github.com/perflab/perflab/internal/knob"
)

func TestParseChoice(t *testing.T) {
	for _, tc := range []struct {
		in, sel string
		words   []string
		ok      bool
	}{
		{"always [madvise] never", "madvise", []string{"always", "madvise", "never"}, true},
		{"[always] madvise never\n", "always", []string{"always", "madvise", "never"}, true},
		{"always within_size advise [never] deny force", "never", []string{"always", "within_size", "advise", "never", "deny", "force"}, true},
		{"always madvise never", "", []string{"always", "madvise", "never"}, false},
		{"[] x", "", []string{"[]", "x"}, false},
		{"", "", nil, false},
	} {
		sel, words, ok := knob.ParseChoice(tc.in)
		if sel != tc.sel || ok != tc.ok {
			t.Errorf("knob.ParseChoice(%q) = %q, %v; want %q, %v", tc.in, sel, ok, tc.sel, tc.ok)
		}
		if !reflect.DeepEqual(words, tc.words) {
			t.Errorf("words of %q: %q, want %q", tc.in, words, tc.words)
		}
	}
}

func FuzzParseChoice(f *testing.F) {
	for _, s := range []string{"always [madvise] never", "[always] madvise never\n", "a [b] [c]", "[]", "[[x]]", ""} {
		f.Add(s)
	}
	if data, err := os.ReadFile(fixture.Dir("kvm") + "/sys/kernel/mm/transparent_hugepage/shmem_enabled"); err == nil {
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, words, ok := knob.ParseChoice(s)
		if len(words) != len(strings.Fields(s)) {
			t.Fatalf("%q: %d words from %d fields", s, len(words), len(strings.Fields(s)))
		}
		if !ok {
			if sel != "" {
				t.Fatalf("%q: selection %q without ok", s, sel)
			}
			return
		}
		found := false
		for _, w := range words {
			found = found || w == sel
		}
		if !found || !strings.Contains(s, "["+sel+"]") {
			t.Fatalf("%q: selection %q not among %q", s, sel, words)
		}
	})
}
