package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/store"
)

func importServer(t *testing.T, cfg Config) (http.Handler, *store.Store, []byte) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "perflab.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	body, err := os.ReadFile(filepath.Join("testdata", "real-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	return New(st, cfg).Handler(), st, body
}

// TestCrossSiteImportRefused: a page on another origin (another local port,
// a sibling sub-domain) posting with the session cookie plants nothing.
func TestCrossSiteImportRefused(t *testing.T) {
	h, st, body := importServer(t, Config{Listen: "127.0.0.1:8080", Token: "tok", AllowImport: true})
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		{"cookie only", map[string]string{"Cookie": tokenCookie + "=tok"}},
		{"cookie, cross-site fetch", map[string]string{"Cookie": tokenCookie + "=tok", "Sec-Fetch-Site": "cross-site", "Origin": "http://127.0.0.1:9999"}},
		{"cookie, same-site other port", map[string]string{"Cookie": tokenCookie + "=tok", "Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:9999"}},
		{"bearer from another origin", map[string]string{"Authorization": "Bearer tok", "Origin": "http://evil.example"}},
		{"bearer, Origin null", map[string]string{"Authorization": "Bearer tok", "Origin": "null"}},
	} {
		req := localRequest("POST", "/import", bytes.NewReader(body))
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", tc.name, rec.Code, rec.Body.String())
		}
	}
	refs, n, err := st.RunRefs(t.Context(), store.Page{Filter: store.Filter{Limit: 10}})
	if err != nil || n != 0 {
		t.Fatalf("cross-site posts stored %d runs (%v, %v)", n, refs, err)
	}
	// The console's own client: same origin, bearer.
	req := localRequest("POST", "/import", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Origin", "http://127.0.0.1:8080")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("same-origin import: %d %s", rec.Code, rec.Body.String())
	}
}

// TestForeignHostRefused: DNS rebinding sends the attacker's name as Host;
// a token-less console on loopback answers loopback names only.
func TestForeignHostRefused(t *testing.T) {
	h, _, _ := importServer(t, Config{Listen: "127.0.0.1:8080"})
	for host, want := range map[string]int{
		"rebind.evil.example:8080": http.StatusMisdirectedRequest,
		"evil.example":             http.StatusMisdirectedRequest,
		"":                         http.StatusMisdirectedRequest,
		"127.0.0.1:8080":           200,
		"localhost:8080":           200,
		"[::1]:8080":               200,
	} {
		req := localRequest("GET", "/runs?format=json", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
		if want != 200 && strings.Contains(rec.Body.String(), `"runs"`) {
			t.Errorf("Host %q read the store", host)
		}
	}
	h2, _, _ := importServer(t, Config{Listen: "0.0.0.0:8080", Token: "tok", AllowHost: []string{"perflab.example.com"}, AllowPlaintext: true})
	for host, want := range map[string]int{"perflab.example.com": 200, "PERFLAB.example.com:8080": 200, "other.example.com": http.StatusMisdirectedRequest, "0.0.0.0:8080": http.StatusMisdirectedRequest} {
		req := localRequest("GET", "/healthz", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		h2.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("--allow-host, Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}

// TestTokenRedirectStaysOnOrigin: ?token= on a path like //evil.example/x
// redirects to a path of this console, never to another origin.
func TestTokenRedirectStaysOnOrigin(t *testing.T) {
	h, _, _ := importServer(t, Config{Listen: "127.0.0.1:8080", Token: "tok"})
	for _, target := range []string{"//evil.example/x?token=tok", "/%2F%2Fevil.example/x?token=tok", "/\\evil.example?token=tok", "///evil.example?token=tok"} {
		req := localRequest("GET", "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = strings.SplitN(target, "?", 2)[0], "", "token=tok"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		loc := rec.Header().Get("Location")
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
			t.Errorf("%s: %d Location %q, want a path on this origin", target, rec.Code, loc)
		}
	}
}

func TestHistoryWithoutParamsAndPerZero(t *testing.T) {
	h, _, _ := importServer(t, Config{Listen: "127.0.0.1:8080"})
	code, body := get(t, h, "/history?format=json")
	var d struct{ Hosts []string }
	if code != 200 || json.Unmarshal([]byte(body), &d) != nil || d.Hosts == nil || strings.Contains(body, `"hosts": null`) || strings.Contains(body, `"hosts":null`) {
		t.Errorf("/history without parameters: %d %.200s", code, body)
	}
	if code, body := get(t, h, "/runs?per=0"); code != 400 || !strings.Contains(body, "per=0") {
		t.Errorf("/runs?per=0: %d %.100s", code, body)
	}
}

// TestImportDuplicateSampleAtomic: POST /import of an export whose second
// run repeats a sample stores nothing and answers 400 naming the run, never
// the database's constraint text.
func TestImportDuplicateSampleAtomic(t *testing.T) {
	h, st, body := importServer(t, Config{Listen: "127.0.0.1:8080", Token: "tok", AllowImport: true})
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	runs := doc["runs"].([]any)
	second := runs[1].(map[string]any)
	samples := second["samples"].([]any)
	second["samples"] = append(samples, samples[0])
	bad, _ := json.Marshal(doc)
	req := localRequest("POST", "/import", bytes.NewReader(bad))
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(out, second["id"].(string)) || strings.Contains(out, "constraint") || strings.Contains(out, "UNIQUE") {
		t.Errorf("duplicate-sample import: %d %s", rec.Code, out)
	}
	if _, n, _ := st.RunRefs(t.Context(), store.Page{Filter: store.Filter{Limit: 10}}); n != 0 {
		t.Errorf("a refused import stored %d runs", n)
	}
}
