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
// the body (only with --allow-import, which requires --token). Runs
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
	stored, skipped := 0, 0
	for _, rn := range ex.Runs {
		err := s.st.SaveRun(r.Context(), rn, ex.Snapshots[rn.SnapshotID])
		switch {
		case errors.Is(err, store.ErrExists):
			skipped++
		case err != nil:
			s.fail(w, r, badf("run %s: %v", rn.ID, err))
			return
		default:
			stored++
		}
	}
	w.Header().Set("Content-Type", "application/json")
	writeJSON(w, map[string]int{"stored": stored, "already_stored": skipped})
}
