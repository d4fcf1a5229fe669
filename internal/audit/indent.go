package audit

// appendIndented appends compact JSON (as json.Marshal writes it: no white
// space outside strings) indented as json.Indent(dst, src, "", indent)
// indents it. encoding/json's Indent runs its validating scanner over
// every byte a second time, which was 7% of a live `perflab audit --format
// json` (docs/performance.md, "Snapshot + audit"); the marshaller's
// output needs no validation.
func appendIndented(dst, src []byte, indent string) []byte {
	depth := 0
	open := false // just wrote '{' or '[': "{}" and "[]" stay on one line
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			newline()
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				j = len(src) - 1
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			depth++
			open = true
		case '}', ']':
			depth--
			if open {
				open = false
			} else {
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
