package tasks

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// fields decodes one JSON object member by member, recording every invalid
// member in a shared problems list under its dotted name.
type fields struct {
	m      map[string]json.RawMessage
	prefix string
	p      *problems
}

// newFields decodes raw as a JSON object. A null or missing object gives an
// empty field set; anything else that is not an object is recorded.
func newFields(raw json.RawMessage, prefix string, p *problems) *fields {
	f := &fields{m: map[string]json.RawMessage{}, prefix: prefix, p: p}
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return f
	}
	if err := json.Unmarshal(raw, &f.m); err != nil {
		p.add(prefixName(prefix), "must be a JSON object")
	}
	return f
}

func prefixName(prefix string) string {
	if prefix == "" {
		return "body"
	}
	return prefix
}

func (f *fields) name(key string) string {
	if f.prefix == "" {
		return key
	}
	return f.prefix + "." + key
}

// raw returns a member, treating JSON null as absent.
func (f *fields) raw(key string) (json.RawMessage, bool) {
	r, ok := f.m[key]
	if !ok || bytes.Equal(bytes.TrimSpace(r), []byte("null")) {
		return nil, false
	}
	return r, true
}

func (f *fields) has(key string) bool { _, ok := f.raw(key); return ok }

func (f *fields) sub(key string) *fields {
	r, _ := f.raw(key)
	return newFields(r, f.name(key), f.p)
}

func (f *fields) str(key string, required bool) string {
	r, ok := f.raw(key)
	if !ok {
		if required {
			f.p.add(f.name(key), "is required")
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		f.p.add(f.name(key), "must be a string")
		return ""
	}
	if required && s == "" {
		f.p.add(f.name(key), "must not be empty")
	}
	return s
}

func (f *fields) boolean(key string, def bool) bool {
	r, ok := f.raw(key)
	if !ok {
		return def
	}
	var b bool
	if err := json.Unmarshal(r, &b); err != nil {
		f.p.add(f.name(key), "must be true or false")
		return def
	}
	return b
}

// integer decodes an integer member in [min, max]; a number with a fraction
// or out of range is recorded.
func (f *fields) integer(key string, def, min, max int64, required bool) int64 {
	r, ok := f.raw(key)
	if !ok {
		if required {
			f.p.add(f.name(key), "is required")
		}
		return def
	}
	var n json.Number
	if err := json.Unmarshal(r, &n); err != nil {
		f.p.add(f.name(key), "must be an integer")
		return def
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		fv, ferr := n.Float64()
		if ferr != nil || fv != math.Trunc(fv) || math.Abs(fv) > 1<<53 {
			f.p.add(f.name(key), "must be an integer")
			return def
		}
		v = int64(fv)
	}
	if v < min || v > max {
		if max == math.MaxInt64 {
			f.p.add(f.name(key), "must be at least %d (got %d)", min, v)
		} else {
			f.p.add(f.name(key), "must be between %d and %d (got %d)", min, max, v)
		}
		return def
	}
	return v
}

func (f *fields) number(key string, required bool) (float64, bool) {
	r, ok := f.raw(key)
	if !ok {
		if required {
			f.p.add(f.name(key), "is required")
		}
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(r, &v); err != nil {
		f.p.add(f.name(key), "must be a number")
		return 0, false
	}
	return v, true
}

// positiveRange decodes a required positive finite number.
func (f *fields) positiveRange(key string) float64 {
	v, ok := f.number(key, true)
	if ok && !(v > 0 && !math.IsInf(v, 0)) {
		f.p.add(f.name(key), "must be a positive finite number (got %v)", v)
	}
	return v
}

// ellipsoid decodes {"ellipsoid_ranges": {...}, "rotation": {...}}; the
// rotation defaults to zeros when absent.
func (f *fields) ellipsoid() geostat.Ellipsoid {
	r := f.sub("ellipsoid_ranges")
	if !f.has("ellipsoid_ranges") {
		f.p.add(f.name("ellipsoid_ranges"), "is required")
	}
	e := geostat.Ellipsoid{Major: r.positiveRange("major"), SemiMajor: r.positiveRange("semi_major"), Minor: r.positiveRange("minor")}
	rot := f.sub("rotation")
	angle := func(key string, max float64) float64 {
		v, ok := rot.number(key, false)
		if ok && !(v >= 0 && v <= max) {
			rot.p.add(rot.name(key), "must be between 0 and %v (got %v)", max, v)
		}
		return v
	}
	e.Rotation = geostat.Rotation{DipAzimuth: angle("dip_azimuth", 360), Dip: angle("dip", 180), Pitch: angle("pitch", 360)}
	return e
}

// discretisation decodes {"nx", "ny", "nz"} each 1..9, default 1.
func (f *fields) discretisation(key string) grid.BlockDiscretisation {
	d := f.sub(key)
	return grid.BlockDiscretisation{
		NX: int(d.integer("nx", 1, 1, grid.MaxDiscretisation, false)),
		NY: int(d.integer("ny", 1, 1, grid.MaxDiscretisation, false)),
		NZ: int(d.integer("nz", 1, 1, grid.MaxDiscretisation, false)),
	}
}

// objectURL decodes an object reference URL string.
func (f *fields) objectURL(key string) ObjectRef {
	s := f.str(key, true)
	if s == "" {
		return ObjectRef{}
	}
	ref, err := ParseObjectRef(s)
	if err != nil {
		f.p.add(f.name(key), "%v", err)
	}
	return ref
}

// legacyRef decodes the seed's geoscience-object-reference: object_reference
// plus an optional object_element list whose first element path names the
// attribute.
func (f *fields) legacyRef(key string, needElement bool) (ObjectRef, string) {
	if !f.has(key) {
		f.p.add(f.name(key), "is required")
		return ObjectRef{}, ""
	}
	r := f.sub(key)
	if t := r.str("type", false); t != "" && t != "geoscience-object-reference" {
		f.p.add(r.name("type"), "must be \"geoscience-object-reference\"")
	}
	ref := r.objectURL("object_reference")
	path := ""
	if raw, ok := r.raw("object_element"); ok {
		var els []struct {
			Type string `json:"type"`
			Path string `json:"path"`
		}
		if err := json.Unmarshal(raw, &els); err != nil {
			f.p.add(r.name("object_element"), "must be a list of {type, path}")
		} else if len(els) > 0 {
			path = els[0].Path
			if path == "" {
				f.p.add(r.name("object_element")+"[0].path", "is required")
			}
		}
	}
	if needElement && path == "" {
		f.p.add(r.name("object_element"), "an element path naming the attribute is required")
	}
	return ref, path
}

func (f *fields) reject(key, reason string) {
	if f.has(key) {
		f.p.add(f.name(key), "%s", reason)
	}
}

// unmarshalStrict decodes a member into v, recording a type error.
func (f *fields) unmarshal(key string, v any) bool {
	r, ok := f.raw(key)
	if !ok {
		return false
	}
	if err := json.Unmarshal(r, v); err != nil {
		f.p.add(f.name(key), "invalid: %v", err)
		return false
	}
	return true
}
