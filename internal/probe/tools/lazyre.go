package tools

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles a parser's pattern the first time it is used: the
// parsers' 28 patterns compiled at package initialisation cost every
// perflab command, `perflab audit` included, at start-up
// (docs/performance.md, "Snapshot + audit").
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
