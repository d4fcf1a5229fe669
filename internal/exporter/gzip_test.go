package exporter

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

func scrapeWith(t testing.TB, e *Exporter, method, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept-Encoding", accept)
	}
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%s %q: %d %s", method, accept, rec.Code, rec.Body)
	}
	return rec
}

// A scraper that accepts gzip gets the same exposition compressed, with a
// Content-Length that matches what was sent; one that refuses it (or says
// nothing) gets it plain.
func TestScrapeGzip(t *testing.T) {
	e, _ := newExporter(t)
	plain := scrapeWith(t, e, "GET", "")
	if plain.Header().Get("Content-Encoding") != "" {
		t.Fatalf("plain scrape came encoded %q", plain.Header().Get("Content-Encoding"))
	}
	if n, _ := strconv.Atoi(plain.Header().Get("Content-Length")); n != plain.Body.Len() || n == 0 {
		t.Errorf("Content-Length %s for a %d-byte body", plain.Header().Get("Content-Length"), plain.Body.Len())
	}
	gz := scrapeWith(t, e, "GET", "deflate, gzip;q=0.8")
	if gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip scrape headers: %v", gz.Header())
	}
	if n, _ := strconv.Atoi(gz.Header().Get("Content-Length")); n != gz.Body.Len() {
		t.Errorf("Content-Length %s for a %d-byte gzipped body", gz.Header().Get("Content-Length"), gz.Body.Len())
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	unz, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unz, plain.Body.Bytes()) {
		t.Errorf("gzipped body (%d bytes unzipped) differs from the plain one (%d bytes)", len(unz), plain.Body.Len())
	}
	parse(t, unz)
	t.Logf("exposition: %d bytes plain, %s gzipped", plain.Body.Len(), gz.Header().Get("Content-Length"))
	if r := scrapeWith(t, e, "GET", "gzip;q=0, identity"); r.Header().Get("Content-Encoding") != "" {
		t.Errorf("gzip;q=0 still got %q", r.Header().Get("Content-Encoding"))
	}
	if r := scrapeWith(t, e, "HEAD", "gzip"); r.Body.Len() != 0 {
		t.Errorf("HEAD wrote a %d-byte body", r.Body.Len())
	}
}

// The runtime metrics are re-rendered in the background once they are a
// second old: a later scrape sees a newer rendering, and no scrape waited
// for it.
func TestRuntimeMetricsRefresh(t *testing.T) {
	e, _ := newExporter(t)
	first := e.resp.Load().at
	e.mu.Lock()
	e.rtAt = first.Add(-2 * time.Second) // as if rendered two seconds ago
	e.publishLocked()
	e.mu.Unlock()
	scrapeWith(t, e, "GET", "")
	deadline := time.Now().Add(10 * time.Second)
	for !e.resp.Load().at.After(first) {
		if time.Now().After(deadline) {
			t.Fatal("the runtime metrics were not re-rendered within 10 s of a stale scrape")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "deflate, gzip": true, "gzip;q=0": false, "gzip; q=0.0": false,
		"gzip;q=0.5": true, "identity": false, "x-gzip": false, "br, gzip ; q=1": true, "gzip;q=bogus": true,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "deflate, gzip;q=0.8", ",,;", "gzip;q="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) { acceptsGzip(h) })
}
