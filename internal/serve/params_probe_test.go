package serve

import (
	"net/url"
	"testing"
)

// Your own probes are named by their command or URL: the console takes
// those names (spaces, quotes, slashes) and refuses control characters.
func TestProbeParamTakesOwnProbeNames(t *testing.T) {
	for _, name := range []string{"cpu", "exec:sleep 0.02", `exec:sh -c 'echo "x"'`, "http://127.0.0.1:8080/api?a=b&c=d"} {
		p := newParams(url.Values{"probe": {name}}, "probe")
		if got := p.probe("probe"); got != name || p.err != nil {
			t.Errorf("%q: got %q, %v", name, got, p.err)
		}
	}
	for _, bad := range []string{"exec:a\nb", "x\x00", string(make([]byte, 5000))} {
		p := newParams(url.Values{"probe": {bad}}, "probe")
		if p.probe("probe"); p.err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
