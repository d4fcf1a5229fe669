package remote

import (
	"encoding/json"
	"io"
	"sync"
)

// frame is one message from the remote agent to the local side: the
// child's stdout or stderr bytes, the run export, the exit code. One JSON
// object per line keeps the stream self-delimiting over one SSH channel.
type frame struct {
	K    string `json:"k"`              // out, err, export, exit
	D    []byte `json:"d,omitempty"`    // bytes (base64 in JSON)
	Code int    `json:"code,omitempty"` // exit code of the command
}

const (
	frameOut    = "out"
	frameErr    = "err"
	frameExport = "export"
	frameSnap   = "snapshot"
	frameExit   = "exit"
)

// frameWriter serialises frames from several goroutines.
type frameWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

func newFrameWriter(w io.Writer) *frameWriter { return &frameWriter{enc: json.NewEncoder(w)} }

func (f *frameWriter) send(fr frame) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.err = f.enc.Encode(fr)
	return f.err
}

// stream is an io.Writer that sends what is written as frames of kind k.
type stream struct {
	fw *frameWriter
	k  string
}

func (s stream) Write(p []byte) (int, error) {
	if err := s.fw.send(frame{K: s.k, D: append([]byte(nil), p...)}); err != nil {
		// The local side is gone; keep draining the child.
		return len(p), nil
	}
	return len(p), nil
}
