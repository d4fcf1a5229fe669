package serve

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guarded answers only requests meant for this console:
//
//   - the Host header must be a loopback name or address, the address
//     listened on, or a name given with --allow-host (only with a token):
//     a DNS-rebinding page sends its own name and is refused, so a
//     token-less console on 127.0.0.1 cannot be read through a browser;
//   - a request that changes state (any method but GET and HEAD) must come
//     from this origin: a cross-site Sec-Fetch-Site or an Origin naming
//     another host is refused, and the token must be in the Authorization
//     header (a browser sends cookies cross-site, but never that header
//     without a CORS preflight this server does not answer).
func (s *Server) guarded(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	if h, _, err := net.SplitHostPort(s.cfg.Listen); err == nil {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			allowed[strings.ToLower(h)] = true
		}
	}
	for _, h := range s.cfg.AllowHost {
		allowed[strings.ToLower(h)] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, allowed) {
			http.Error(w, "421 this console does not answer for host "+quoteHost(r.Host)+": open it by its loopback address, or start serve with --token and --allow-host NAME", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin is the second half of guarded, after authorization (so a
// request without the token still hears 401 first).
func (s *Server) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if why := crossSite(r); why != "" {
				http.Error(w, "403 cross-site request refused: "+why, http.StatusForbidden)
				return
			}
			if s.cfg.Token != "" && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				http.Error(w, "403 a request that changes the store needs 'Authorization: Bearer T' (a cookie is not enough)", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(hostport string, allowed map[string]bool) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	return allowed[h]
}

// crossSite says why a state-changing request is not from this origin, or
// "" when it is (or comes from a client that is not a browser).
func crossSite(r *http.Request) string {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return "Sec-Fetch-Site is " + r.Header.Get("Sec-Fetch-Site")
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return ""
	}
	u, err := url.Parse(o)
	if err != nil || o == "null" || !strings.EqualFold(u.Host, r.Host) {
		return "Origin " + quoteHost(o) + " is not this console"
	}
	return ""
}

// quoteHost prints a client-supplied value safely in a one-line answer.
func quoteHost(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	return strings.ToValidUTF8(quoted(s), "?")
}

func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '<' || r == '>' {
			b.WriteString("?")
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// sameOriginPath turns a request path into a redirect target that stays on
// this origin: "//evil.example/x" and "/\evil.example" become "/evil.example/x"
// and "/evil.example", never a protocol-relative URL.
func sameOriginPath(u *url.URL) string {
	p := "/" + strings.TrimLeft(u.EscapedPath(), "/\\")
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}
