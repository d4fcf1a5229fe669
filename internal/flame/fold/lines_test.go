package fold

import "testing"

// TestByteClassMatchesDefinitions: lineKey's table says what isHex and
// the blank test say, for every byte.
func TestByteClassMatchesDefinitions(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		if got, want := byteClass[b] == classHex, isHex(b); got != want {
			t.Errorf("byte %#x: hex %v, want %v", b, got, want)
		}
		if got, want := byteClass[b] == classBlank, b == '\t' || b == ' '; got != want {
			t.Errorf("byte %#x: blank %v, want %v", b, got, want)
		}
	}
}
