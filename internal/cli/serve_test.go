package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/serve"
	"github.com/perflab/perflab/internal/store"
)

// The console's comparison is 'perflab compare': the same selection gives
// the same JSON, byte for byte, because both resolve the sides the same
// way and render through report.JSON.
func TestServeCompareEqualsCompareJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "perflab.db")
	export := filepath.Join("..", "serve", "testdata", "real-runs.json")
	if code, _, stderr := runCLI(t, "runs", "import", "--db", db, export); code != 0 {
		t.Fatalf("import: %d %s", code, stderr)
	}
	st, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := serve.New(st, serve.Config{Listen: "127.0.0.1:0"}).Handler()
	runs, err := st.Runs(t.Context(), store.Filter{Probe: "cpu"})
	if err != nil || len(runs) < 2 {
		t.Fatalf("%d cpu runs, %v", len(runs), err)
	}
	for _, sel := range [][]string{
		{"a1", "a3"},
		{"a1", "a2", "a3"},
		{runs[0].ID[:8], runs[1].ID}, // a run id prefix and a full id
	} {
		args := append([]string{"compare", "--db", db, "--format", "json"}, sel...)
		code, want, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("compare %v: %d %s", sel, code, stderr)
		}
		url := "/compare?format=json"
		for _, s := range sel {
			url += "&s=" + s
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, localRequest("GET", url, nil))
		got, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != 200 || string(got) != want {
			t.Errorf("%v: console %d\n%.600s\ncompare --format json:\n%.600s", sel, rec.Code, got, want)
		}
		// And the HTML export is what --format html writes.
		args[4] = "html"
		_, wantHTML, _ := runCLI(t, args...)
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, localRequest("GET", url[:len("/compare?format=")]+"html"+url[len("/compare?format=json"):], nil))
		if gotHTML, _ := io.ReadAll(rec.Result().Body); string(gotHTML) != wantHTML {
			t.Errorf("%v: the console's HTML export differs from compare --format html", sel)
		}
	}
}

// Listening beyond loopback without a token is refused with one line and
// exit code 2, before any store is opened.
func TestServeRefusesOpenListen(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "0.0.0.0:0", "--db", "/nonexistent/x.db"},
		{"serve", "--listen", "127.0.0.1:0", "--allow-import", "--db", "/nonexistent/x.db"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "--token") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8080"
	return r
}
