package report

import (
	"io"

	"github.com/perflab/perflab/internal/report/htmlpage"
)

// CSP is the Content-Security-Policy of every page (see htmlpage).
const CSP = htmlpage.CSP

// Page is one self-contained HTML document (see htmlpage.Page).
type Page = htmlpage.Page

// WritePage writes p through the one page shell.
func WritePage(w io.Writer, p Page) error { return htmlpage.WritePage(w, p) }

// ErrorTrap is the first script of every page (see htmlpage.ErrorTrap).
const ErrorTrap = htmlpage.ErrorTrap
