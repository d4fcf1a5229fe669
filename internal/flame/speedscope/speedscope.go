// Package speedscope exports folded stacks in speedscope's file format
// (https://www.speedscope.app/file-format-schema.json), so a profile can be
// opened in speedscope's time-ordered, left-heavy and sandwich views.
//
// A folded profile maps onto one "sampled" profile: each unique stack is a
// sample (frame indices root first) weighted by its count, with frame
// names deduplicated in the shared frame table. The order of samples is
// the folded order, not time: folding has already discarded time.
package speedscope

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/perflab/perflab/internal/flame/folded"
)

// Schema is the $schema every speedscope file names.
const Schema = "https://www.speedscope.app/file-format-schema.json"

// File is the top-level document.
type File struct {
	Schema             string    `json:"$schema"`
	Shared             Shared    `json:"shared"`
	Profiles           []Profile `json:"profiles"`
	Name               string    `json:"name,omitempty"`
	ActiveProfileIndex int       `json:"activeProfileIndex"`
	Exporter           string    `json:"exporter,omitempty"`
}

// Shared holds the frames all profiles index into.
type Shared struct {
	Frames []Frame `json:"frames"`
}

// Frame is one function.
type Frame struct {
	Name string `json:"name"`
}

// Profile is a sampled profile.
type Profile struct {
	Type       string    `json:"type"` // "sampled"
	Name       string    `json:"name"`
	Unit       string    `json:"unit"` // none, nanoseconds, …
	StartValue float64   `json:"startValue"`
	EndValue   float64   `json:"endValue"`
	Samples    [][]int   `json:"samples"`
	Weights    []float64 `json:"weights"`
}

// Units speedscope understands for weights.
var Units = []string{"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}

// Convert builds the speedscope document for p. unit says what a count is
// ("none" for sample counts, "nanoseconds" for cpu-clock periods).
func Convert(p *folded.Profile, name, unit, exporter string) *File {
	f := &File{Schema: Schema, Name: name, Exporter: exporter}
	idx := map[string]int{}
	prof := Profile{Type: "sampled", Name: name, Unit: unit,
		Samples: make([][]int, 0, len(p.Stacks)), Weights: make([]float64, 0, len(p.Stacks))}
	for _, s := range p.Stacks {
		if s.Count == 0 {
			continue
		}
		stack := make([]int, 0, strings.Count(s.Frames, ";")+1)
		rest := s.Frames
		for {
			i := strings.IndexByte(rest, ';')
			fr := rest
			if i >= 0 {
				fr = rest[:i]
			}
			k, ok := idx[fr]
			if !ok {
				k = len(f.Shared.Frames)
				idx[fr] = k
				f.Shared.Frames = append(f.Shared.Frames, Frame{Name: strings.ToValidUTF8(fr, "\uFFFD")})
			}
			stack = append(stack, k)
			if i < 0 {
				break
			}
			rest = rest[i+1:]
		}
		prof.Samples = append(prof.Samples, stack)
		w := folded.Value(s.Count, p.Scale) // fractional counts stay fractional
		prof.Weights = append(prof.Weights, w)
		prof.EndValue += w
	}
	f.Profiles = []Profile{prof}
	return f
}

// Write encodes the document as JSON.
func Write(w io.Writer, f *File) error {
	return json.NewEncoder(w).Encode(f)
}
