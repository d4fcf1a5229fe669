package fold

import "bytes"

// Frame-name cleanup. Each function appends the cleaned name to dst and
// returns it, so a whole stack is built in one reused buffer.

// appendFrame appends the display name of one frame (one "->" part of a
// perf symbol) to dst: the module fallback for [unknown] symbols, then the
// generic tidy (argument lists removed, ';' made ':'), then the Java tidy.
func appendFrame(dst, fn, module, pc []byte, addrs, java bool) []byte {
	start := len(dst)
	if string(fn) == "[unknown]" && (addrs || string(module) != "[unknown]") {
		// perf could not symbolise the address: name the frame after the
		// object it is in, which is usually the most useful hint left.
		name := []byte("unknown")
		if string(module) != "[unknown]" {
			name = module[bytes.LastIndexByte(module, '/')+1:]
		}
		dst = append(dst, '[')
		dst = append(dst, name...)
		if addrs {
			dst = append(dst, " <"...)
			dst = append(dst, pc...)
			dst = append(dst, '>')
		}
		dst = append(dst, ']')
	} else {
		dst = append(dst, fn...)
	}
	dst = tidyGeneric(dst, start)
	if java {
		f := dst[start:]
		if len(f) > 0 && f[0] == 'L' && bytes.IndexByte(f, '/') >= 0 {
			copy(f, f[1:])
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}

// tidyGeneric rewrites dst[start:] in place: ';' (the folded separator)
// becomes ':', and the name is cut at the first top-level '(' unless that
// parenthesis is part of a Go method name ("pkg.(*T).M") or a C++
// "(anonymous namespace)". Parentheses inside <>, {} or [] are template or
// lambda syntax and are kept.
func tidyGeneric(dst []byte, start int) []byte {
	f := dst[start:]
	depth := 0
	lastDot := -1
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case ';':
			f[i] = ':'
		case '<', '{', '[':
			depth++
		case '>', '}', ']', ')':
			depth--
		case '(':
			if depth == 0 && lastDot != i && !hasPrefix(f[i:], "(anonymous namespace)") {
				return dst[:start+i]
			}
			depth++
		case '.':
			lastDot = i + 1
		}
	}
	return dst
}

// isKernel reports whether a module names kernel code: a bracketed
// pseudo-module ([kernel.kallsyms], [nf_conntrack]), a .ko, or a vmlinux
// image; never [unknown].
func isKernel(m []byte) bool {
	if string(m) == "[unknown]" {
		return false
	}
	return (len(m) > 0 && m[0] == '[') || hasSuffix(m, ".ko") || isVmlinux(m)
}

// isVmlinux: the module's last "vmlinux" is followed only by a version-ish
// suffix ([A-Za-z0-9._-]), as in /usr/lib/debug/boot/vmlinux-6.1.0-18.
func isVmlinux(m []byte) bool {
	i := bytes.LastIndex(m, []byte("vmlinux"))
	if i < 0 {
		return false
	}
	for _, c := range m[i:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// isJIT reports a module that holds JIT-compiled code: a perf map written
// by the runtime (/tmp/perf-PID.map) or a jitdump-injected object.
func isJIT(m []byte) bool {
	return (hasPrefix(m, "/tmp/perf-") && hasSuffix(m, ".map")) ||
		(bytes.Contains(m, []byte("/jitted-")) && hasSuffix(m, ".so"))
}

// rustHashLen is len("h") + 16 hex digits, the suffix of a legacy Rust
// symbol that perf demangled only partially.
const rustHashLen = 17

// fixRust demangles what perf leaves of legacy Rust symbols
// ("_$LT$std..fs..File$u20$as$u20$std..io..Read$GT$::read::h5d84…") into
// "<std::fs::File as std::io::Read>::read"; other names are returned as is.
func fixRust(sym []byte, scratch *[]byte) []byte {
	if len(sym) < rustHashLen {
		return sym
	}
	h := sym[len(sym)-rustHashLen:]
	if h[0] != 'h' {
		return sym
	}
	for _, c := range h[1:] {
		if !isHex(c) {
			return sym
		}
	}
	rest := sym[:len(sym)-rustHashLen]
	rest = bytes.TrimSuffix(rest, []byte("::"))
	if hasPrefix(rest, "_$") {
		rest = rest[1:]
	}
	out := (*scratch)[:0]
	for len(rest) > 0 {
		switch rest[0] {
		case '.':
			if len(rest) > 1 && rest[1] == '.' {
				out = append(out, "::"...)
				rest = rest[2:]
			} else {
				out = append(out, '.')
				rest = rest[1:]
			}
		case '$':
			matched := false
			for _, e := range rustEscapes {
				if hasPrefix(rest, e.from) {
					out = append(out, e.to...)
					rest = rest[len(e.from):]
					matched = true
					break
				}
			}
			if !matched {
				out = append(out, rest...)
				rest = nil
			}
		default:
			i := bytes.IndexAny(rest, "$.")
			if i < 0 {
				i = len(rest)
			}
			out = append(out, rest[:i]...)
			rest = rest[i:]
		}
	}
	*scratch = out
	return out
}

var rustEscapes = []struct{ from, to string }{
	{"$SP$", "@"}, {"$BP$", "*"}, {"$RF$", "&"}, {"$LT$", "<"}, {"$GT$", ">"},
	{"$LP$", "("}, {"$RP$", ")"}, {"$C$", ","}, {"$u7e$", "~"}, {"$u20$", " "},
	{"$u27$", "'"}, {"$u3d$", "="}, {"$u5b$", "["}, {"$u5d$", "]"}, {"$u7b$", "{"},
	{"$u7d$", "}"}, {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u21$", "!"}, {"$u22$", "\""},
}
