package serve

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/report"
)

// warmFor bounds the start-up prime: a slow store delays readiness by at
// most this long.
const warmFor = 3 * time.Second

// warmConns is how many connections the prime opens and primes at once:
// a comparison reads on up to three at once (its form's labels, its
// runs' documents and their monitor series), and the PostgreSQL store
// keeps three idle, which is what a request finds.
const warmConns = 3

// warm primes the server before it listens (docs/serve.md, "Cold
// requests"): it opens the store's connections and runs, on each, the
// queries a comparison of two hosts and the label filter make, so their
// backends have read the catalog and pgx has prepared the statements,
// and it renders one comparison page so Go's first-use work (templates,
// the report's assets) is done. The comparison made is forgotten: the
// first request computes its own, only on warm connections. Only after a
// restart with the index's cache: on a first start the index is read in
// the background, and waiting for it here would delay readiness by
// minutes.
func (s *Server) warm(ctx context.Context) {
	s.ix.mu.Lock()
	var hosts []string
	for _, h := range s.ix.hosts {
		if len(hosts) == 2 {
			break
		}
		hosts = append(hosts, h.Host)
	}
	loaded := s.ix.loaded
	s.ix.mu.Unlock()
	if !loaded || len(hosts) < 2 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, warmFor)
	defer cancel()
	names := []string{"host:" + hosts[0], "host:" + hosts[1]}
	var wg sync.WaitGroup
	for range warmConns {
		wg.Add(1)
		go func() { // each on a connection of its own while the others are busy
			defer wg.Done()
			if _, err := s.st.LabelHosts(ctx, ""); err != nil { // the hosts page's label filter
				return
			}
			if _, err := s.recentLabels(ctx); err != nil { // and kept for the compare form
				return
			}
			sel, err := s.compareKey(ctx, names, "", false)
			if err != nil {
				return
			}
			if c, err := s.compareSides(ctx, sel, names, ""); err == nil {
				report.JSON(io.Discard, c)
			}
		}()
	}
	wg.Wait()
	// One page as a request gets it (form, page, HTML report), then
	// forget the comparison.
	q := url.Values{"s": names}
	if r, err := http.NewRequestWithContext(ctx, "GET", "/compare?"+q.Encode(), nil); err == nil {
		s.view(s.compare)(discardWriter{}, r)
	}
	s.mu.Lock()
	clear(s.compares)
	s.mu.Unlock()
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
