package report

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/bisect"
	"github.com/perflab/perflab/internal/fleet"
)

func TestWriteUnsupportedFormat(t *testing.T) {
	var b bytes.Buffer
	err := Write(&b, bisect.Plan{}, FormatHTML, Options{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Format != FormatHTML || strings.Join(fe.Supported, ",") != "text,json" || b.Len() != 0 {
		t.Errorf("plan as html: %v (%+v), wrote %q", err, fe, b.String())
	}
	if err := Write(&b, struct{}{}, FormatText, Options{}); !errors.As(err, &fe) || len(fe.Supported) != 0 {
		t.Errorf("a type without renderer: %v", err)
	}
	if got := Formats(&fleet.Report{}); strings.Join(got, ",") != "text,md,json,html" {
		t.Errorf("fleet formats %v", got)
	}
}

// Every page comes from the one shell: one doctype, the CSP, the error
// trap first, data that cannot close its element.
func TestPageShell(t *testing.T) {
	var b bytes.Buffer
	err := WritePage(&b, Page{Title: "a <b>", CSS: "p{}", Body: "<p>x</p>\n",
		Data: map[string]string{"k": "</script><script>alert(1)</script>"}, Script: "var s='</script>';"})
	if err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Count(s, "<!DOCTYPE html>") != 1 || !strings.Contains(s, "<title>a &lt;b&gt;</title>") {
		t.Errorf("page head:\n%s", s)
	}
	trap, csp := strings.Index(s, ErrorTrap), strings.Index(s, "Content-Security-Policy")
	if trap < 0 || csp < 0 || trap > strings.Index(s, "<style>") || strings.Index(s, "<script") != trap {
		t.Errorf("the CSP and the error trap must come first:\n%s", s)
	}
	if strings.Count(s, "</script>") != 3 || strings.Contains(s, "alert(1)</script>") {
		t.Errorf("data or script closed its element early:\n%s", s)
	}
}

// Only internal/report writes whole HTML documents or imports
// html/template and text/tabwriter: rendering has one home.
func TestOnlyReportRenders(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(filepath.ToSlash(rel), "internal/report/") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(bytes.ToLower(src), []byte("<!doctype html")) {
			t.Errorf("%s writes an HTML document: use report.WritePage", rel)
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "html/template" || p == "text/tabwriter" {
				t.Errorf("%s imports %s: rendering belongs in internal/report", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
