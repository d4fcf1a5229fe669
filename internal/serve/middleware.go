package serve

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"
)

// Limits on what a request may ask for.
const (
	maxQueryBytes = 4096 // the whole query string
	maxParamBytes = 512  // one value
	maxParams     = 32   // values in all
	maxSides      = 8    // sides of a comparison
	maxPageRuns   = 500  // runs in one list page
	maxSeriesRuns = 300  // runs per series in the history view
	maxBodyBytes  = 32 << 20
	// requestTimeout bounds the work of one request.
	requestTimeout = 20 * time.Second
)

// tokenCookie carries the token for a browser after it opened a URL with
// ?token=T once.
const tokenCookie = "perflab_token"

// authorized demands the token, when one is configured, as
// "Authorization: Bearer T", the cookie, or ?token=T (which sets the cookie
// and redirects to the URL without it, so the token does not stay in
// permalinks or history). Comparisons are constant-time.
func (s *Server) authorized(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	want := []byte(s.cfg.Token)
	ok := func(got string) bool { return subtle.ConstantTimeCompare([]byte(got), want) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") && ok(strings.TrimPrefix(h, "Bearer ")) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(tokenCookie); err == nil && ok(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		if t := q.Get("token"); t != "" && ok(t) && r.Method == http.MethodGet {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, sameOriginPath(&u), http.StatusSeeOther)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="perflab"`)
		http.Error(w, "401 unauthorized: give the token as 'Authorization: Bearer T' or open the URL once with ?token=T", http.StatusUnauthorized)
	})
}

// limited refuses oversized or malformed queries and bounds bodies.
func (s *Server) limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.URL.RawQuery) > maxQueryBytes {
			http.Error(w, "400 query too long", http.StatusBadRequest)
			return
		}
		q, err := parseQuery(r.URL.RawQuery)
		if err != nil {
			http.Error(w, "400 "+err.Error(), http.StatusBadRequest)
			return
		}
		n := 0
		for _, vs := range q {
			for _, v := range vs {
				n++
				if len(v) > maxParamBytes {
					http.Error(w, "400 a query parameter is longer than 512 bytes", http.StatusBadRequest)
					return
				}
			}
		}
		if n > maxParams {
			http.Error(w, "400 too many query parameters", http.StatusBadRequest)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		// The store queries stop at this deadline (503), before the
		// server's write timeout would cut the response anyway.
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// recovered turns a panic in a view into a 500 and a log line, never a
// dropped connection.
func (s *Server) recovered(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Printf("panic serving %s: %v", r.URL.Path, v)
				http.Error(w, "500 internal error (logged)", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// logged writes one line per request: remote, method, path (without the
// query, which may hold a token), status, bytes, duration.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		s.log.Printf("%s %s %s %d %dB %s", r.RemoteAddr, r.Method, r.URL.Path, sw.status, sw.bytes, time.Since(start).Round(time.Microsecond))
	})
}
