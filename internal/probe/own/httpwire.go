package own

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The load generator speaks HTTP/1.1 itself, on raw connections, with the
// request serialised once: net/http's client allocates per request and
// spends several times wrk's CPU per request, and on a host where the
// load generator and the server share the cores that CPU is taken from
// the server being measured (docs/probes.md has the measured ceiling).

// response is what the load generator needs from one response.
type response struct {
	status int
	close  bool // the server will close the connection after it
}

var errMalformed = errors.New("malformed response")

// readResponse reads one response to a request with method head (HEAD has
// no body) and discards the body.
func readResponse(br *bufio.Reader, head bool) (response, error) {
	var r response
	line, err := readLine(br)
	if err != nil {
		return r, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return r, fmt.Errorf("%w: status line %q", errMalformed, truncate(string(line), 40))
	}
	http10 := line[7] == '0'
	st, err := strconv.Atoi(string(line[9:12]))
	if err != nil || st < 100 {
		return r, fmt.Errorf("%w: status line %q", errMalformed, truncate(string(line), 40))
	}
	r.status = st
	length, chunked, keepAlive := int64(-1), false, false
	for {
		h, err := readLine(br)
		if err != nil {
			return r, err
		}
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return r, fmt.Errorf("%w: header %q", errMalformed, truncate(string(h), 40))
		}
		v = bytes.TrimSpace(v)
		switch {
		case asciiEqualFold(k, "content-length"):
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return r, fmt.Errorf("%w: Content-Length %q", errMalformed, truncate(string(v), 20))
			}
			length = n
		case asciiEqualFold(k, "transfer-encoding"):
			chunked = bytes.Contains(bytes.ToLower(v), []byte("chunked"))
		case asciiEqualFold(k, "connection"):
			lv := bytes.ToLower(v)
			r.close = r.close || bytes.Contains(lv, []byte("close"))
			keepAlive = bytes.Contains(lv, []byte("keep-alive"))
		}
	}
	if http10 && !keepAlive {
		r.close = true
	}
	switch {
	case head || st == 204 || st == 304 || st < 200:
	case chunked:
		if err := discardChunked(br); err != nil {
			return r, err
		}
	case length >= 0:
		if _, err := br.Discard(int(min(length, 1<<40))); err != nil {
			return r, err
		}
	default:
		// No length: the body runs to the end of the connection.
		if _, err := io.Copy(io.Discard, br); err != nil {
			return r, err
		}
		r.close = true
	}
	return r, nil
}

func discardChunked(br *bufio.Reader) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, truncate(string(line), 20))
		}
		if n == 0 {
			for { // trailers
				t, err := readLine(br)
				if err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(n)); err != nil {
			return err
		}
		if l, err := readLine(br); err != nil || len(l) != 0 {
			return fmt.Errorf("%w: no CRLF after a chunk", errMalformed)
		}
	}
}

// readLine reads a CRLF- (or LF-) terminated line without the terminator;
// a line longer than the reader's buffer is malformed.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: line longer than %d bytes", errMalformed, br.Size())
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
