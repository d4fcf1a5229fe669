package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
)

// localRequest is httptest.NewRequest addressed to the console as a browser
// on this machine addresses it (httptest's default Host, example.com, is
// refused as a foreign Host).
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8080"
	return r
}
