package snapshot

import "strings"

// parseCmdline parses a kernel command line the way the kernel's own
// next_arg() does: white space separates words, double quotes protect white
// space ("foo=\"a b\"" and "\"foo=a b\"" both give foo → "a b"), and "--"
// ends the kernel's parameters (the rest belongs to init). A word without
// "=" is a flag (value ""); a repeated key keeps its last value, as most
// kernel parameters do. In names, "-" and "_" are the same to the kernel,
// so keys are written with "_" (intel-idle.max_cstate → intel_idle.max_cstate).
//
// procfs.CmdLine splits on white space only, so quoted values would break.
func parseCmdline(s string) map[string]string {
	params := map[string]string{}
	for _, w := range cmdlineWords(s) {
		if w == "--" {
			break
		}
		k, v, _ := strings.Cut(w, "=")
		if k == "" {
			continue
		}
		params[strings.ReplaceAll(k, "-", "_")] = v
	}
	return params
}

// cmdlineWords splits on unquoted white space and drops the quotes.
func cmdlineWords(s string) []string {
	var (
		words []string
		cur   strings.Builder
		inQ   bool
		have  bool
	)
	for _, r := range s {
		switch {
		case r == '"':
			inQ = !inQ
			have = true
		case !inQ && (r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'):
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		words = append(words, cur.String())
	}
	return words
}
