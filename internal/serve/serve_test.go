package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/store"
)

func get(t *testing.T, h http.Handler, url string, hdr ...string) (int, string) {
	t.Helper()
	req := localRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want error // nil, ErrNeedToken, or any error (errAny)
	}{
		{Config{Listen: "127.0.0.1:8080"}, nil},
		{Config{Listen: "[::1]:0"}, nil},
		{Config{Listen: "localhost:8080"}, nil},
		{Config{Listen: "0.0.0.0:8080"}, ErrNeedToken},
		{Config{Listen: ":8080"}, ErrNeedToken},
		{Config{Listen: "10.1.2.3:8080"}, ErrNeedToken},
		{Config{Listen: "0.0.0.0:8080", Token: "t"}, errAny}, // the token in clear
		{Config{Listen: "0.0.0.0:8080", Token: "t", AllowPlaintext: true}, nil},
		{Config{Listen: "0.0.0.0:8080", Token: "t", TLSCert: "c.pem", TLSKey: "k.pem"}, nil},
		{Config{Listen: "0.0.0.0:8080", Token: "t", TLSCert: "c.pem"}, errAny},
		{Config{Listen: "127.0.0.1:8080", Token: "   "}, errAny},
		{Config{Listen: "127.0.0.1:8080", Token: "t\n"}, errAny},
		{Config{Listen: "127.0.0.1:8080", AllowHost: []string{"perflab.example"}}, ErrNeedToken},
		{Config{Listen: "127.0.0.1:8080", AllowImport: true}, ErrNeedToken},
		{Config{Listen: "127.0.0.1:8080", AllowImport: true, Token: "t"}, nil},
		{Config{Listen: "nonsense"}, errAny},
	} {
		err := CheckListen(c.cfg)
		switch {
		case c.want == nil && err != nil, c.want != nil && err == nil:
			t.Errorf("%+v: %v, want %v", c.cfg, err, c.want)
		case c.want == ErrNeedToken && !errors.Is(err, ErrNeedToken):
			t.Errorf("%+v: %v, want ErrNeedToken", c.cfg, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error is not one line: %q", c.cfg, err)
		}
	}
}

var errAny = errors.New("any")

func TestTokenRequired(t *testing.T) {
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "0.0.0.0:0", Token: "s3cret"}).Handler()
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret"}, {"Cookie", "perflab_token=s3cre"}} {
		if code, _ := get(t, h, "/", hdr...); code != http.StatusUnauthorized {
			t.Errorf("headers %v: %d, want 401", hdr, code)
		}
	}
	if code, _ := get(t, h, "/?token=wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong ?token: %d, want 401", code)
	}
	if code, body := get(t, h, "/", "Authorization", "Bearer s3cret"); code != 200 || !strings.Contains(body, "node01") {
		t.Errorf("bearer token: %d %.200s", code, body)
	}
	if code, _ := get(t, h, "/runs", "Cookie", "perflab_token=s3cret"); code != 200 {
		t.Errorf("cookie: %d", code)
	}
	// ?token= sets the cookie and redirects to the URL without it.
	req := localRequest("GET", "/runs?host=node01&token=s3cret", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/runs?host=node01" || !strings.Contains(rec.Header().Get("Set-Cookie"), "perflab_token=s3cret") {
		t.Errorf("?token: %d Location %q Set-Cookie %q", rec.Code, rec.Header().Get("Location"), rec.Header().Get("Set-Cookie"))
	}
}

func TestNoWriteEndpointsByDefault(t *testing.T) {
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	req := localRequest("POST", "/import", strings.NewReader("{}"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed && rec.Code != http.StatusNotFound {
		t.Errorf("POST /import without --allow-import: %d", rec.Code)
	}
}

func TestBadQueries(t *testing.T) {
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	for _, u := range []string{
		"/?x=1",               // unknown parameter
		"/runs?per=100000",    // over the page limit
		"/runs?page=-1",       // negative
		"/runs?host=a&host=b", // repeated
		"/history?probe=cpu&from=yesterday",
		"/history?probe=cpu&from=2026-11-02&to=2026-11-01",
		"/history?probe=%zz",   // malformed escape
		"/history?probe=a%00b", // control character
		"/history?probe=%ff",   // invalid UTF-8
		"/history?probe=" + strings.Repeat("a", 600),
		"/compare?s=a&s=b&s=c&s=d&s=e&s=f&s=g&s=h&s=i",
		"/compare?s=%3Cscript%3E&s=x",
		"/?format=xml",
		"/runs?" + strings.Repeat("host=a&", 700),
	} {
		if code, body := get(t, h, u); code != http.StatusBadRequest {
			t.Errorf("%.80s: %d %.100s, want 400", u, code, body)
		}
	}
	for _, u := range []string{"/compare?s=nosuchlabel&s=a1", "/audit?snapshot=ffffffff", "/history?probe=nosuch"} {
		if code, _ := get(t, h, u); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", u, code)
		}
	}
}

func TestViewsJSON(t *testing.T) {
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	var hosts struct {
		Hosts []hostRow `json:"hosts"`
	}
	getJSON(t, h, "/?format=json", &hosts)
	if len(hosts.Hosts) != 4 { // node01-03 and the real runs' host
		t.Fatalf("%d hosts, want 4", len(hosts.Hosts))
	}
	n1 := hosts.Hosts[0]
	if n1.Host != "node01" || n1.Runs != 48 || n1.Summary == nil || n1.Summary.Kernel == "" || len(n1.Drift) != 2 {
		t.Errorf("node01: %+v", n1)
	}
	var hist historyDoc
	getJSON(t, h, "/history?probe=cpu&host=node01&host=node02&n=100&format=json", &hist)
	if len(hist.Series) != 2 || len(hist.Series[0].Points) != 24 || len(hist.Series[0].CI) != 24 {
		t.Fatalf("history: %d series", len(hist.Series))
	}
	// The step on node01 is found and annotated with the sysctl; node02
	// has none.
	if len(hist.Series[0].Changes) != 1 || hist.Series[1].Host != "node02" || len(hist.Series[1].Changes) != 0 {
		t.Fatalf("changes: node01 %+v, node02 %+v", hist.Series[0].Changes, hist.Series[1].Changes)
	}
	found := false
	for _, d := range hist.Series[0].Changes[0].Settings {
		found = found || strings.Contains(d.Path, stepSysctl)
	}
	if !found {
		t.Errorf("change point not annotated with %s: %+v", stepSysctl, hist.Series[0].Changes[0].Settings)
	}
	// Zoom: a time range keeps only the runs inside it.
	getJSON(t, h, "/history?probe=cpu&host=node01&from=2026-10-03&to=2026-10-06&format=json", &hist)
	if len(hist.Series) != 1 || len(hist.Series[0].Points) != 6 {
		t.Errorf("zoomed history: %+v", hist.Series)
	}
	var runs runsDoc
	getJSON(t, h, "/runs?host=node02&per=10&page=2&format=json", &runs)
	if runs.Total != 48 || len(runs.Runs) != 10 || runs.Runs[0].Host != "node02" {
		t.Errorf("runs page: total %d, %d runs", runs.Total, len(runs.Runs))
	}
	var ad auditDoc
	getJSON(t, h, "/audit?host=node01&format=json", &ad)
	if ad.Summary == nil || ad.Summary.Total == 0 || len(ad.Findings) != ad.Summary.Total || ad.Snapshot != "node01-s00018" {
		t.Errorf("audit: %+v", ad.Summary)
	}
	var sd snapDiffDoc
	getJSON(t, h, "/snapshots?host=node01&a=node01-s00006&b=node01-s00012&format=json", &sd)
	found = false
	for _, d := range sd.Diffs {
		found = found || strings.Contains(d.Path, stepSysctl)
	}
	if !found {
		t.Errorf("snapshot diff across the step lacks %s: %+v", stepSysctl, sd.Diffs)
	}
}

func getJSON(t *testing.T, h http.Handler, url string, v any) {
	t.Helper()
	code, body := get(t, h, url)
	if code != 200 {
		t.Fatalf("%s: %d %s", url, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// A metric only one side has is a row of its own, not dropped.
func TestCompareKeepsOneSidedMetrics(t *testing.T) {
	st := openRO(t, smallStore(t))
	h := New(st, Config{Listen: "127.0.0.1:0"}).Handler()
	var c struct {
		Metrics []struct {
			Probe string            `json:"probe"`
			Sides []json.RawMessage `json:"sides"`
		} `json:"metrics"`
	}
	getJSON(t, h, "/compare?s=host:node01&s=host:node02&probe=cpu&format=json", &c)
	cpuOnly := len(c.Metrics)
	var one runsDoc
	getJSON(t, h, "/runs?host=node02&probe=cpu&per=1&format=json", &one)
	getJSON(t, h, "/compare?s=host:node01&s="+one.Runs[0].ID+"&format=json", &c) // all probes vs one cpu run
	oneSided := 0
	for _, m := range c.Metrics {
		if m.Probe == "syscall" && len(m.Sides) == 2 && string(m.Sides[1]) == "null" {
			oneSided++
		}
	}
	if oneSided == 0 || len(c.Metrics) <= cpuOnly {
		t.Errorf("%d metrics (cpu alone %d), %d syscall rows with the second side empty", len(c.Metrics), cpuOnly, oneSided)
	}
}

func TestImport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perflab.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := New(st, Config{Listen: "127.0.0.1:0", Token: "tok", AllowImport: true}).Handler()
	body, err := os.ReadFile(filepath.Join("testdata", "real-runs.json"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(auth string, b []byte) (int, string) {
		req := localRequest("POST", "/import", bytes.NewReader(b))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, _ := post("", body); code != http.StatusUnauthorized {
		t.Errorf("import without the token: %d", code)
	}
	if code, out := post("tok", body); code != 200 || !strings.Contains(out, `"stored": 6`) {
		t.Errorf("import: %d %s", code, out)
	}
	if code, out := post("tok", body); code != 200 || !strings.Contains(out, `"already_stored": 6`) {
		t.Errorf("second import: %d %s", code, out)
	}
	if code, _ := post("tok", []byte("{not json")); code != http.StatusBadRequest {
		t.Errorf("garbage import: %d", code)
	}
}
