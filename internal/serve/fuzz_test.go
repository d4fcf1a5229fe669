package serve

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

var fuzzPaths = []string{"/", "/history", "/compare", "/runs", "/audit", "/snapshots", "/flame", "/healthz", "/nosuch"}

// FuzzHandlers sends arbitrary queries to every view: the answer is a
// page, 400 or 404, never a 500 (which a panic would become) or a
// crash.
func FuzzHandlers(f *testing.F) {
	for _, q := range []string{"", "format=json", "probe=cpu&host=node01&host=node02&from=2026-10-02&to=2026-10-05", "s=a1&s=a3",
		"s=host:node01&s=host:node02&probe=syscall", "host=node02&per=10&page=3", "host=node01&snapshot=node01-s0", "a=node01-s00006&b=node01-s00012",
		"f=after.folded&base=before.folded", "verdict=worse&probe=cpu&host=ode&label=node02-w000&page=1&per=1&sort=name", "verdict=nosuch&sort=x&per=0", "probe=%zz", "n=999999", "from=2026-13-45", "s=" + "x%00", "workload=web", "f=../../etc/passwd"} {
		for i := range fuzzPaths {
			f.Add(uint8(i), q)
		}
	}
	st := openRO(f, smallStore(f))
	h := New(st, Config{Listen: "127.0.0.1:0", FlameDir: flameDir(f)}).Handler()
	f.Fuzz(func(t *testing.T, path uint8, query string) {
		req := localRequest("GET", "/", nil)
		req.URL.Path = fuzzPaths[int(path)%len(fuzzPaths)]
		req.URL.RawQuery = query
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusNotFound:
		default:
			t.Fatalf("%s?%q: %d %s", req.URL.Path, query, rec.Code, rec.Body.String())
		}
	})
}
