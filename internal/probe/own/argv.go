package own

import (
	"fmt"
	"strings"
)

// SplitArgs splits a command line into words the way a POSIX shell does
// for plain words, single quotes, double quotes and backslashes, and
// nothing else: no variables, globs, pipes or redirections. A character
// that only a shell would act on (| & ; < > ( ) $ ` * ?), outside quotes,
// is an error that says to ask for a shell: running 'a | b' as the argv
// ["a", "|", "b"] would measure something else without a word.
func SplitArgs(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word (an empty quoted word counts)
		quote rune // 0, '\'' or '"'
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			case c == '$' || c == '`':
				return nil, fmt.Errorf("%q expands %c inside double quotes, which needs a shell", s, c)
			default:
				cur.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("%q ends with a lone backslash", s)
			}
			i++
			cur.WriteRune(rs[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case strings.ContainsRune("|&;<>()$`*?", c):
			return nil, fmt.Errorf("%q uses %q, which needs a shell", s, c)
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q has an unterminated %c quote", s, quote)
	}
	if in {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
}
