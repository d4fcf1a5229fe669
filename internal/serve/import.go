package serve

import (
	"errors"
	"fmt"
	"html"
	"net/http"

	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/store"
)

func htmlEsc(s string) string { return html.EscapeString(s) }

// importRuns stores the runs of a 'perflab runs export' document posted as
// the body (only with --allow-import, which requires --token) through
// store.Import, the same atomic import as 'perflab runs import'. Runs
// already stored are skipped; the answer counts both.
func (s *Server) importRuns(w http.ResponseWriter, r *http.Request) {
	ex, err := run.ReadExport(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("413 the export is larger than %d MiB", maxBodyBytes>>20), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "400 not a perflab run export: "+err.Error(), http.StatusBadRequest)
		return
	}
	res, err := s.st.Import(r.Context(), ex)
	var ie *store.ImportError
	switch {
	case errors.As(err, &ie) && ie.Unwrap() == nil:
		s.fail(w, r, badf("%v", ie))
		return
	case err != nil:
		s.log.Printf("import: %v (%v)", err, errors.Unwrap(err))
		http.Error(w, "500 the import failed and stored nothing (logged)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	writeJSON(w, res)
}
