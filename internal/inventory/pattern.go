package inventory

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Pattern is a parsed Ansible host pattern.
type Pattern struct {
	terms []term
}

type term struct {
	op   byte // 0 union, '&' intersection, '!' exclusion
	text string
	re   *regexp.Regexp // for ~regex terms
	glob bool           // text has *, ? or [ and is matched as a shell glob
}

// maxPattern bounds a pattern's length; inventories name thousands of
// hosts, not patterns megabytes long.
const maxPattern = 64 << 10

// subscriptRe is Ansible's subscript syntax: group[0], group[-1],
// group[1:3], group[2:].
var subscriptRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^.+\[(-?\d+|\d*:\d*)\]$`) })

// ParsePattern parses an Ansible host pattern (see the package doc).
func ParsePattern(s string) (*Pattern, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w is empty (use all for every host)", ErrPattern)
	}
	if len(s) > maxPattern {
		return nil, fmt.Errorf("%w is longer than %d bytes", ErrPattern, maxPattern)
	}
	p := &Pattern{}
	for _, raw := range splitPattern(s) {
		t, err := parseTerm(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrPattern, s, err)
		}
		p.terms = append(p.terms, t)
	}
	return p, nil
}

// splitPattern splits on ',' when there is one, else on ':' outside
// brackets, as Ansible does.
func splitPattern(s string) []string {
	if strings.Contains(s, ",") {
		return strings.Split(s, ",")
	}
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ':':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func parseTerm(s string) (term, error) {
	var t term
	if s != "" && (s[0] == '&' || s[0] == '!') {
		t.op, s = s[0], strings.TrimSpace(s[1:])
	}
	if s == "" {
		return t, fmt.Errorf("empty term (two separators in a row, or a lone & or !)")
	}
	t.text = s
	if strings.HasPrefix(s, "~") {
		re, err := regexp.Compile(`^(?:` + s[1:] + `)`)
		if err != nil {
			return t, fmt.Errorf("term %q: bad regular expression: %v", s, err)
		}
		t.re = re
		return t, nil
	}
	if subscriptRe().MatchString(s) {
		return t, fmt.Errorf("term %q: subscripts (group[0], group[0:2]) are not supported; name the hosts or use a glob", s)
	}
	if strings.ContainsAny(s, "*?[") {
		if _, err := path.Match(s, ""); err != nil {
			return t, fmt.Errorf("term %q: bad glob: %v", s, err)
		}
		t.glob = true
	}
	return t, nil
}

// String is the pattern in canonical form: plain terms first, then & and !
// ones, the order in which they apply, joined by ':' (by ',' when a term
// contains a ':', which only a comma-separated pattern can hold).
func (p *Pattern) String() string {
	sep := ":"
	parts := make([]string, 0, len(p.terms))
	for _, t := range p.ordered() {
		if t.op != 0 {
			parts = append(parts, string(t.op)+t.text)
		} else {
			parts = append(parts, t.text)
		}
		if strings.Contains(t.text, ":") {
			sep = ","
		}
	}
	return strings.Join(parts, sep)
}

// ordered is the terms in Ansible's order of application: union terms,
// then intersections, then exclusions, each kept in written order.
func (p *Pattern) ordered() []term {
	out := make([]term, 0, len(p.terms))
	for _, op := range []byte{0, '&', '!'} {
		for _, t := range p.terms {
			if t.op == op {
				out = append(out, t)
			}
		}
	}
	return out
}

// Select returns the names of the hosts of inv the pattern selects,
// sorted. A term that matches no host or group is an error.
func (p *Pattern) Select(inv *Inventory) ([]string, error) {
	terms := p.ordered()
	sel := map[string]bool{}
	if len(terms) > 0 && terms[0].op != 0 {
		for n := range inv.data.Hosts {
			sel[n] = true // only & and ! terms: start from all
		}
	}
	for _, t := range terms {
		m := t.match(inv)
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: %q matches no host or group in %s (hosts: %s)", ErrPattern, t.text, inv.Path, sample(inv.HostNames()))
		}
		switch t.op {
		case 0:
			for n := range m {
				sel[n] = true
			}
		case '&':
			for n := range sel {
				if !m[n] {
					delete(sel, n)
				}
			}
		case '!':
			for n := range m {
				delete(sel, n)
			}
		}
	}
	out := make([]string, 0, len(sel))
	for n := range sel {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// match is the set of hosts one term names: every host for all and *, the
// host of that name and the hosts of the group of that name, or of every
// host and group whose name the glob or regular expression matches.
func (t term) match(inv *Inventory) map[string]bool {
	out := map[string]bool{}
	if t.text == "all" || t.text == "*" {
		for n := range inv.data.Hosts {
			out[n] = true
		}
		return out
	}
	for n := range inv.data.Hosts {
		if t.matches(n) {
			out[n] = true
		}
	}
	for _, g := range inv.data.Groups {
		if t.matches(g.Name) {
			for n := range g.Hosts {
				out[n] = true
			}
		}
	}
	return out
}

func (t term) matches(name string) bool {
	switch {
	case t.re != nil:
		return t.re.MatchString(name)
	case t.glob:
		ok, _ := path.Match(t.text, name)
		return ok
	}
	return t.text == name
}

func sample(names []string) string {
	if len(names) > 5 {
		return strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	return strings.Join(names, ", ")
}
