package serve

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/flame/diff"
	"github.com/perflab/perflab/internal/flame/folded"
	flamerender "github.com/perflab/perflab/internal/flame/render"
)

// maxFoldedBytes bounds one folded file the flame view reads.
const maxFoldedBytes = 64 << 20

// flameTop is how many functions the top-changes table lists.
const flameTop = 30

type flameDoc struct {
	Files []string    `json:"files"` // the .folded files in --flame DIR
	File  string      `json:"file,omitempty"`
	Base  string      `json:"base,omitempty"`
	Total float64     `json:"total,omitempty"`
	Top   []diff.Row  `json:"top_changes,omitempty"`
	Note  string      `json:"note,omitempty"`
	Graph interface{} `json:"-"`
}

// flame renders a folded file of --flame DIR (f=NAME) as the interactive
// HTML flame graph of 'perflab flame render', or with base=NAME the
// differential graph of 'perflab flame diff' with its top-changes table.
// The store has no profiles yet, so the files given on the command line
// are the only source; the directory is only read.
func (s *Server) flame(w http.ResponseWriter, r *http.Request) {
	s.view(s.flameView)(w, r)
}

func (s *Server) flameView(ctx context.Context, q url.Values) (*result, error) {
	p := newParams(q, "f", "base")
	d := flameDoc{File: p.str("f"), Base: p.str("base"), Files: []string{}}
	if p.err != nil {
		return nil, p.err
	}
	res := &result{View: "flame", Title: "perflab: flame graphs", Data: &d}
	if s.cfg.FlameDir == "" {
		d.Note = "start perflab serve with --flame DIR to browse the .folded files in DIR"
		return res, nil
	}
	var err error
	if d.Files, err = foldedFiles(s.cfg.FlameDir); err != nil {
		return nil, err
	}
	res.Nav = flameForm(d.Files, d.File, d.Base)
	if d.File == "" {
		return res, nil
	}
	after, err := s.readFolded(d.File, d.Files)
	if err != nil {
		return nil, err
	}
	opt := flamerender.Options{Title: d.File}
	tree := flamerender.Build(after, false, false)
	if d.Base != "" {
		before, err := s.readFolded(d.Base, d.Files)
		if err != nil {
			return nil, err
		}
		raw := diff.Join(before, after, diff.Options{})
		d.Top = diff.Table(raw, flameTop)
		tree = flamerender.Build(diff.Join(before, after, diff.Options{Normalize: true}), false, false)
		opt.Title = d.Base + " → " + d.File
		res.Tail = `<h2 class="pl-sel">Top changes (percentage points of all samples)</h2>` + topTable(d.Top)
	}
	d.Total = float64(after.Total())
	res.Title = "perflab flame: " + opt.Title
	res.HTML = func(w io.Writer) error { return flamerender.WriteHTML(w, tree, opt) }
	return res, nil
}

func foldedFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".folded") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// readFolded reads one of the listed files: a name from the listing, never
// a path, so no request reads outside the directory.
func (s *Server) readFolded(name string, files []string) (*folded.Profile, error) {
	if !contains(files, name) {
		return nil, &notFound{"no folded file " + name + " in the flame directory"}
	}
	f, err := os.Open(filepath.Join(s.cfg.FlameDir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFoldedBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFoldedBytes {
		return nil, badf("%s is larger than %d MiB", name, maxFoldedBytes>>20)
	}
	prof, err := folded.Read(bytes.NewReader(data))
	if err != nil {
		return nil, badf("%s: %v", name, err)
	}
	return prof, nil
}

func flameForm(files []string, f, base string) string {
	var b strings.Builder
	b.WriteString(`<form class="pl-sel" method="get" action="/flame">profile <select name="f">`)
	opts := func(sel string, blank bool) {
		if blank {
			b.WriteString(`<option value="">(none: no diff)</option>`)
		}
		for _, n := range files {
			s := ""
			if n == sel {
				s = " selected"
			}
			b.WriteString(`<option` + s + `>` + htmlEsc(n) + `</option>`)
		}
	}
	opts(f, false)
	b.WriteString(`</select> diff against <select name="base">`)
	opts(base, true)
	b.WriteString(`</select><button>show</button></form>`)
	return b.String()
}

// topTable is the top-changes table of a differential graph, in
// percentage points of the profile, as 'perflab flame diff' prints it.
func topTable(rows []diff.Row) string {
	var b strings.Builder
	b.WriteString(`<table class="pl-sel" id="top-changes"><thead><tr><th>function</th><th>incl before</th><th>incl after</th><th>Δ incl</th><th>self before</th><th>self after</th><th>Δ self</th></tr></thead><tbody>`)
	for _, r := range rows {
		fmt.Fprintf(&b, `<tr data-fn="%s"><td>%s</td><td>%.2f%%</td><td>%.2f%%</td><td>%+.2f pp</td><td>%.2f%%</td><td>%.2f%%</td><td>%+.2f pp</td></tr>`,
			htmlEsc(r.Function), htmlEsc(r.Function), r.InclBefore, r.InclAfter, r.InclDelta(), r.SelfBefore, r.SelfAfter, r.SelfDelta())
	}
	b.WriteString(`</tbody></table>`)
	return b.String()
}
