package exporter

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestIdleKeepAlivesClosed: 300 clients that send one request and then sit
// on their keep-alive connection are disconnected by the server.
func TestIdleKeepAlivesClosed(t *testing.T) {
	e, _ := newExporter(t)
	old := IdleTimeout
	IdleTimeout = 300 * time.Millisecond
	defer func() { IdleTimeout = old }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, "127.0.0.1:0", func(a net.Addr) { addrc <- a }) }()
	addr := (<-addrc).String()
	var conns []net.Conn
	for range 300 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		conns = append(conns, c)
	}
	// Each connection must be closed by the server well within 30 s (the
	// idle timeout is 0.3 s; the margin is for a loaded shared machine).
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 1)
		_, err := c.Read(buf)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("idle keep-alive %d still open after 30 s", i)
		}
	}
	cancel()
	<-done
}

func TestOnlyGetAndHead(t *testing.T) {
	e, _ := newExporter(t)
	h := e.Handler()
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, "/metrics", strings.NewReader("x")))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /metrics: %d, want 405", m, rec.Code)
		}
	}
	for _, m := range []string{"GET", "HEAD"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, "/metrics", nil))
		if rec.Code != 200 {
			t.Errorf("%s /metrics: %d", m, rec.Code)
		}
	}
}

func TestLandingPageEscapesProfileName(t *testing.T) {
	e, _ := newExporter(t)
	w := *e.cfg.Workload
	w.Name = `<script>alert(1)</script>`
	e.cfg.Workload = &w
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if strings.Contains(rec.Body.String(), "<script>") || !strings.Contains(rec.Body.String(), "&lt;script&gt;") {
		t.Errorf("landing page: %s", rec.Body.String())
	}
}
