package run

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
)

// DecodeSeries decodes a monitor series as json.Marshal of
// []MonitorPoint writes it (the form a store keeps apart from the run
// document), with exactly json.Unmarshal's result and error.
//
// Why not only json.Unmarshal: a comparison of two labels spanning a
// fleet store decodes 200 runs' series per request, and the reflective
// decoder spent a third of that request's CPU on them (33 MB/s here;
// docs/performance.md, "Console at ten thousand hosts"). The fast path
// reads only that form — an array of flat objects whose keys are
// MonitorPoint's JSON names, unescaped, each once or more, and whose
// values are JSON numbers — with a table of fields built once from the
// struct's tags, so a field added to MonitorPoint needs nothing here.
// Anything else (whitespace aside: null, strings, an unknown or
// differently cased key, a number its field cannot hold) hands the whole
// input to json.Unmarshal, which decides, and FuzzDecodeSeries holds the
// two to the same results.
func DecodeSeries(b []byte) ([]MonitorPoint, error) {
	if pts, ok := fastSeries(b); ok {
		return pts, nil
	}
	var pts []MonitorPoint
	err := json.Unmarshal(b, &pts)
	return pts, err
}

// seriesField is how the fast path sets one MonitorPoint field.
type seriesField struct {
	index int
	kind  reflect.Kind // of the field, or of what it points to
	ptr   bool
}

// seriesFields maps MonitorPoint's JSON names to its fields: float64 and
// int64 fields and pointers to them (any other kind is left to
// json.Unmarshal).
var seriesFields = func() map[string]seriesField {
	m := map[string]seriesField{}
	t := reflect.TypeFor[MonitorPoint]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		ft, ptr := f.Type, false
		if ft.Kind() == reflect.Pointer {
			ft, ptr = ft.Elem(), true
		}
		if k := ft.Kind(); k == reflect.Float64 || k == reflect.Int64 {
			m[name] = seriesField{index: i, kind: k, ptr: ptr}
		}
	}
	return m
}()

// errSlow sends an input to json.Unmarshal.
var errSlow = errors.New("not the fast form")

// fastSeries is the fast path; ok is false when the input is not of its
// form.
func fastSeries(b []byte) (pts []MonitorPoint, ok bool) {
	d := seriesScanner{b: b}
	d.space()
	if !d.eat('[') {
		return nil, false
	}
	pts = []MonitorPoint{}
	d.space()
	if d.eat(']') {
		return pts, d.end()
	}
	for {
		var p MonitorPoint
		if d.point(&p) != nil {
			return nil, false
		}
		pts = append(pts, p)
		d.space()
		if d.eat(']') {
			return pts, d.end()
		}
		if !d.eat(',') {
			return nil, false
		}
		d.space()
	}
}

// seriesScanner reads the fast form from b at i.
type seriesScanner struct {
	b []byte
	i int
}

func (d *seriesScanner) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *seriesScanner) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (d *seriesScanner) end() bool {
	d.space()
	return d.i == len(d.b)
}

// point reads one object into p.
func (d *seriesScanner) point(p *MonitorPoint) error {
	if !d.eat('{') {
		return errSlow
	}
	d.space()
	if d.eat('}') {
		return nil
	}
	v := reflect.ValueOf(p).Elem()
	for {
		key, err := d.key()
		if err != nil {
			return err
		}
		f, ok := seriesFields[string(key)]
		if !ok {
			return errSlow
		}
		d.space()
		if !d.eat(':') {
			return errSlow
		}
		d.space()
		num, err := d.number()
		if err != nil {
			return err
		}
		if err := set(v.Field(f.index), f, num); err != nil {
			return err
		}
		d.space()
		if d.eat('}') {
			return nil
		}
		if !d.eat(',') {
			return errSlow
		}
		d.space()
	}
}

// key reads a string without escapes or bytes json.Unmarshal would
// rewrite (controls, non-ASCII).
func (d *seriesScanner) key() ([]byte, error) {
	if !d.eat('"') {
		return nil, errSlow
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			k := d.b[start:d.i]
			d.i++
			return k, nil
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, errSlow
		}
		d.i++
	}
	return nil, errSlow
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *seriesScanner) number() ([]byte, error) {
	start := d.i
	d.eat('-')
	switch {
	case d.eat('0'):
	case d.digit1to9():
		d.digits()
	default:
		return nil, errSlow
	}
	if d.eat('.') && d.digits() == 0 {
		return nil, errSlow
	}
	if d.eat('e') || d.eat('E') {
		if !d.eat('+') {
			d.eat('-')
		}
		if d.digits() == 0 {
			return nil, errSlow
		}
	}
	return d.b[start:d.i], nil
}

func (d *seriesScanner) digit1to9() bool {
	if d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9' {
		d.i++
		return true
	}
	return false
}

func (d *seriesScanner) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

// set stores num in the field as json.Unmarshal would; a number the
// field cannot hold (out of range, or not an integer for an int64) is
// json.Unmarshal's to report. The float and integer halves are alike
// but for their setters: kept apart, as a generic one boxed every value.
func set(fv reflect.Value, f seriesField, num []byte) error {
	if f.kind == reflect.Float64 {
		x, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			return errSlow
		}
		if f.ptr {
			fv.Set(reflect.ValueOf(&x))
		} else {
			fv.SetFloat(x)
		}
		return nil
	}
	x, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return errSlow
	}
	if f.ptr {
		fv.Set(reflect.ValueOf(&x))
	} else {
		fv.SetInt(x)
	}
	return nil
}
