package search

import (
	"encoding/json"
	"fmt"
	"math"
)

// Kind names a search result's JSON document.
const Kind = "perflab-search"

// JSON has no NaN: an interval the data could not give (one block) is
// null in the stored result and NaN again when read.

func ptr(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

type effectJSON struct {
	Ratio   *float64 `json:"ratio"`
	Lo      *float64 `json:"lo"`
	Hi      *float64 `json:"hi"`
	Blocks  int      `json:"blocks"`
	Verdict string   `json:"verdict"`
}

// MarshalJSON writes NaN as null.
func (e Effect) MarshalJSON() ([]byte, error) {
	return json.Marshal(effectJSON{ptr(e.Ratio), ptr(e.Lo), ptr(e.Hi), e.Blocks, e.Verdict})
}

// UnmarshalJSON reads null as NaN.
func (e *Effect) UnmarshalJSON(b []byte) error {
	var d effectJSON
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*e = Effect{val(d.Ratio), val(d.Lo), val(d.Hi), d.Blocks, d.Verdict}
	return nil
}

type settingJSON struct {
	Knob    string   `json:"knob"`
	Value   string   `json:"value"`
	From    string   `json:"from"`
	Alone   *Effect  `json:"alone,omitempty"`
	Share   *float64 `json:"share"`
	ShareLo *float64 `json:"share_lo"`
	ShareHi *float64 `json:"share_hi"`
}

// MarshalJSON writes NaN as null.
func (s Setting) MarshalJSON() ([]byte, error) {
	return json.Marshal(settingJSON{s.Knob, s.Value, s.From, s.Alone, ptr(s.Share), ptr(s.ShareLo), ptr(s.ShareHi)})
}

// UnmarshalJSON reads null as NaN.
func (s *Setting) UnmarshalJSON(b []byte) error {
	var d settingJSON
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*s = Setting{d.Knob, d.Value, d.From, d.Alone, val(d.Share), val(d.ShareLo), val(d.ShareHi)}
	return nil
}

type constraintJSON struct {
	Constraint string   `json:"constraint"`
	Worst      *float64 `json:"worst"`
	Baseline   *float64 `json:"baseline"`
	Held       bool     `json:"held"`
}

// MarshalJSON writes NaN as null.
func (c ConstraintCheck) MarshalJSON() ([]byte, error) {
	return json.Marshal(constraintJSON{c.Constraint, ptr(c.Worst), ptr(c.Baseline), c.Held})
}

// UnmarshalJSON reads null as NaN.
func (c *ConstraintCheck) UnmarshalJSON(b []byte) error {
	var d constraintJSON
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*c = ConstraintCheck{d.Constraint, val(d.Worst), val(d.Baseline), d.Held}
	return nil
}

// Decode reads a stored search result (the JSON perflab report search:ID
// shows again).
func Decode(data []byte) (*Result, error) {
	var doc struct {
		Kind string `json:"kind"`
		*Result
	}
	doc.Result = &Result{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != Kind {
		return nil, fmt.Errorf("not a search result (kind %q)", doc.Kind)
	}
	return doc.Result, nil
}
