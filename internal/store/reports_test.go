package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReports(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	if err := s.SaveReport(ctx, Report{ID: "b15ec7aa01", Kind: "bisect", Created: at, Host: "h", Doc: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveReport(ctx, Report{ID: "b15ec7aa01", Kind: "bisect", Created: at, Host: "h", Doc: []byte(`{}`)}); err == nil {
		t.Error("a report id stored twice")
	}
	r, err := s.Report(ctx, "bisect", "b15e")
	if err != nil || r.ID != "b15ec7aa01" || string(r.Doc) != `{"x":1}` || !r.Created.Equal(at) || r.Host != "h" {
		t.Fatalf("report by prefix: %+v %v", r, err)
	}
	if _, err := s.Report(ctx, "other", "b15ec7aa01"); !errors.Is(err, ErrNotFound) {
		t.Errorf("another kind: %v, want not found", err)
	}
	if _, err := s.Report(ctx, "bisect", "zz"); err == nil || !strings.Contains(err.Error(), "zz") {
		t.Errorf("unknown id: %v", err)
	}
	s.Close()
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Report(ctx, "bisect", "b15ec7aa01"); err != nil {
		t.Errorf("read-only read: %v", err)
	}
	if err := ro.SaveReport(ctx, Report{ID: "x", Kind: "bisect"}); err == nil {
		t.Error("read-only store saved a report")
	}
}
