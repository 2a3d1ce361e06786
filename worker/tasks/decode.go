package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// fields decodes one JSON object member by member, recording every invalid
// member in a shared problems list under its dotted name. The rules of the
// members (type, required, bounds, default) come from obj, the object's
// table in rules.go.
type fields struct {
	m      map[string]json.RawMessage
	prefix string
	p      *problems
	obj    *object
}

// newFields decodes raw as a JSON object. A null or missing object gives an
// empty field set; anything else that is not an object is recorded.
func newFields(raw json.RawMessage, prefix string, p *problems, obj *object) *fields {
	f := &fields{m: map[string]json.RawMessage{}, prefix: prefix, p: p, obj: obj}
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

// rule returns the declared rule of a member. A member without a rule is a
// mistake in the tables of rules.go, which the decoder tests reach.
func (f *fields) rule(key string) *rule {
	r := f.obj.lookup(key)
	if r == nil {
		panic(fmt.Sprintf("tasks: no rule for the request member %s", f.name(key)))
	}
	return r
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

// need reports whether a member is present, recording a required one that
// is absent.
func (f *fields) need(key string) bool {
	if f.has(key) {
		return true
	}
	if f.rule(key).required {
		f.p.add(f.name(key), "is required")
	}
	return false
}

// sub returns the fields of an object member (of the object form, for a
// member that takes several forms).
func (f *fields) sub(key string) *fields {
	r := f.rule(key)
	obj := r.obj
	for _, a := range r.alts {
		if a.kind == kObject {
			obj = a.obj
		}
	}
	raw, _ := f.raw(key)
	return newFields(raw, f.name(key), f.p, obj)
}

// strOK decodes a string member; ok is false when it is absent or not a
// string (recorded).
func (f *fields) strOK(key string) (string, bool) {
	r := f.rule(key)
	raw, ok := f.raw(key)
	if !ok {
		if r.required {
			f.p.add(f.name(key), "is required")
		}
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.p.add(f.name(key), "must be a string")
		return "", false
	}
	if r.required && s == "" {
		f.p.add(f.name(key), "must not be empty")
	}
	return s, true
}

func (f *fields) str(key string) string { s, _ := f.strOK(key); return s }

func (f *fields) boolean(key string) bool {
	def, _ := f.rule(key).def.(bool)
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

// integer decodes an integer member within its rule's bounds; a number with
// a fraction or out of range is recorded.
func (f *fields) integer(key string) int64 {
	rl := f.rule(key)
	def, _ := rl.def.(int64)
	min, max := rl.imin, rl.imax
	r, ok := f.raw(key)
	if !ok {
		if rl.required {
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

// number decodes a number member within its rule's bounds; ok is false when
// it is absent or invalid (recorded).
func (f *fields) number(key string) (float64, bool) {
	rl := f.rule(key)
	r, ok := f.raw(key)
	if !ok {
		if rl.required {
			f.p.add(f.name(key), "is required")
		}
		return 0, false
	}
	var v float64
	if err := json.Unmarshal(r, &v); err != nil {
		f.p.add(f.name(key), "must be a number")
		return 0, false
	}
	switch {
	case rl.minExcl && !(v > rl.min && !math.IsInf(v, 0)):
		f.p.add(f.name(key), "must be a positive finite number (got %v)", v)
	case rl.minExcl && rl.hasMax && !(v <= rl.max):
		f.p.add(f.name(key), "must be > %v and ≤ %v (got %v)", rl.min, rl.max, v)
	case rl.hasMin && rl.hasMax && !(v >= rl.min && v <= rl.max):
		f.p.add(f.name(key), "must be between %v and %v (got %v)", rl.min, rl.max, v)
	case rl.hasMin && !rl.hasMax && !(v >= rl.min):
		f.p.add(f.name(key), "must be ≥ %v", rl.min)
	default:
		return v, true
	}
	return v, false
}

// ellipsoid decodes {"ellipsoid_ranges": {...}, "rotation": {...}}; the
// rotation defaults to zeros when absent.
func (f *fields) ellipsoid() geostat.Ellipsoid {
	f.need("ellipsoid_ranges")
	r := f.sub("ellipsoid_ranges")
	e := geostat.Ellipsoid{}
	e.Major, _ = r.number("major")
	e.SemiMajor, _ = r.number("semi_major")
	e.Minor, _ = r.number("minor")
	rot := f.sub("rotation")
	e.Rotation.DipAzimuth, _ = rot.number("dip_azimuth")
	e.Rotation.Dip, _ = rot.number("dip")
	e.Rotation.Pitch, _ = rot.number("pitch")
	return e
}

// discretisation decodes {"nx", "ny", "nz"}.
func (f *fields) discretisation(key string) grid.BlockDiscretisation {
	d := f.sub(key)
	return grid.BlockDiscretisation{NX: int(d.integer("nx")), NY: int(d.integer("ny")), NZ: int(d.integer("nz"))}
}

// objectURL decodes an object reference URL string.
func (f *fields) objectURL(key string) ObjectRef {
	s := f.str(key)
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
// plus an object_element list whose first element path names the attribute
// (required when the rule of object_element says so).
func (f *fields) legacyRef(key string) (ObjectRef, string) {
	if !f.need(key) {
		return ObjectRef{}, ""
	}
	r := f.sub(key)
	if t, ok := r.strOK("type"); ok && t != legacyRefType {
		f.p.add(r.name("type"), "must be \"%s\"", legacyRefType)
	}
	r.str("key") // declared and type-checked, not used
	ref := r.objectURL("object_reference")
	path := ""
	if raw, ok := r.raw("object_element"); ok {
		if els, ok := stringLists(raw, "type", "path"); !ok {
			f.p.add(r.name("object_element"), "must be a list of {type, path}")
		} else if len(els) > 0 {
			path = els[0][1]
			if path == "" {
				f.p.add(r.name("object_element")+"[0].path", "is required")
			}
		}
	}
	if r.rule("object_element").required && path == "" {
		f.p.add(r.name("object_element"), "an element path naming the attribute is required")
	}
	return ref, path
}

// stringLists decodes a list of objects (or nulls) whose members keys are
// strings (or null), matching the member names exactly, as the request
// schemas do; an item's missing member is "".
func stringLists(raw json.RawMessage, keys ...string) ([][]string, bool) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false
	}
	out := make([][]string, len(items))
	for i, item := range items {
		out[i] = make([]string, len(keys))
		for j, k := range keys {
			if r, ok := item[k]; ok && json.Unmarshal(r, &out[i][j]) != nil {
				return nil, false
			}
		}
	}
	return out, true
}

// reject records a member whose rule says it must be absent; the rule's
// description is the reason.
func (f *fields) reject(key string) {
	if f.has(key) {
		f.p.add(f.name(key), "%s", f.rule(key).doc)
	}
}

// unmarshal decodes a member into v, recording a type error.
func (f *fields) unmarshal(key string, v any) bool {
	f.rule(key) // every member the decoder reads is declared
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
