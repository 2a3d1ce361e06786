package bmwire

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// XYZ is a point or size in model units.
type XYZ struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	Z float64 `json:"z"`
}

// Rotation is one item of block_rotation: a clockwise rotation of Angle
// degrees about Axis ("x", "y" or "z").
type Rotation struct {
	Axis  string  `json:"axis"`
	Angle float64 `json:"angle"`
}

// Create is the body of POST …/block-models (A.9.1, the client's
// CreateData). Optional strings are nil when absent or null.
type Create struct {
	Name          string
	Description   *string
	Comment       *string
	CRS           *string
	SizeUnitID    *string
	FillSubblocks bool
	ObjectPath    *string
	ModelOrigin   XYZ
	BlockRotation []Rotation
	// ModelType is size_options.model_type ("regular" when the member is
	// missing, as the client's models default it).
	ModelType string
	// SizeOptions is the size_options object as sent, with model_type
	// filled in when it was missing; the model package decodes and checks
	// it.
	SizeOptions json.RawMessage
	// Lineage is the deprecated lineage member, stored, never interpreted.
	Lineage json.RawMessage
}

// DecodeCreate reads and checks a create body: name (3-100 characters
// after trimming, no / or \), model_origin, block_rotation (at most 3
// items, axis x|y|z, angle in (−360, 360), no two consecutive items on one
// axis), description ≤ 500, comment ≤ 250, coordinate_reference_system
// (EPSG:1024…32767 or WKT, ≤ 10,000), size_unit_id (a LENGTH unit),
// object_path, size_options (an object; its members are the model
// package's). All failures are listed in one *ValidationError.
func DecodeCreate(body []byte, rules Rules) (*Create, error) {
	e := &errs{}
	o, ok := parseObject(body, "", e)
	if !ok {
		if len(e.list) == 0 {
			e.add("body", "must be a JSON object")
		}
		return nil, e.err()
	}
	c := &Create{}
	if o.required("name") {
		if s := o.str("name"); s != nil {
			c.Name = checkName(o, "name", *s)
		}
	}
	c.Description = o.str("description")
	o.maxLen("description", c.Description, maxDescription)
	c.Comment = o.str("comment")
	o.maxLen("comment", c.Comment, maxComment)
	c.CRS = o.str("coordinate_reference_system")
	checkCRS(o, "coordinate_reference_system", c.CRS)
	c.SizeUnitID = o.str("size_unit_id")
	if c.SizeUnitID != nil && !rules.LengthUnit(*c.SizeUnitID) {
		o.e.add(o.name("size_unit_id"), "must be a LENGTH unit id, not %q", *c.SizeUnitID)
	}
	if b := o.boolean("fill_subblocks"); b != nil {
		c.FillSubblocks = *b
	}
	c.ObjectPath = o.str("object_path")
	checkObjectPath(o, "object_path", c.ObjectPath)
	if o.required("model_origin") {
		if p, ok := parseObject(o.raw("model_origin"), o.name("model_origin"), e); ok {
			c.ModelOrigin = xyz(p)
		}
	}
	c.BlockRotation = rotations(o, "block_rotation")
	if o.required("size_options") {
		c.ModelType, c.SizeOptions = sizeOptions(o, "size_options")
	}
	c.Lineage = o.raw("lineage")
	if err := e.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// xyz reads the required x, y, z numbers of p.
func xyz(p object) XYZ {
	var v XYZ
	for _, m := range []struct {
		n string
		f *float64
	}{{"x", &v.X}, {"y", &v.Y}, {"z", &v.Z}} {
		if p.required(m.n) {
			if f := p.number(m.n); f != nil {
				*m.f = *f
			}
		}
	}
	return v
}

// rotations reads block_rotation (absent or null = no rotation).
func rotations(o object, member string) []Rotation {
	items := o.list(member)
	out := make([]Rotation, 0, len(items))
	if len(items) > 3 {
		o.e.add(o.name(member), "must have at most 3 rotations, not %d", len(items))
	}
	for i, raw := range items {
		name := o.name(member) + "[" + strconv.Itoa(i) + "]"
		p, ok := parseObject(raw, name, o.e)
		if !ok {
			if isNull(raw) {
				o.e.add(name, "must be a rotation {axis, angle}")
			}
			continue
		}
		var r Rotation
		if p.required("axis") {
			r.Axis = p.enum("axis", "", "x", "y", "z")
		}
		if p.required("angle") {
			if f := p.number("angle"); f != nil {
				r.Angle = *f
				if *f <= -360 || *f >= 360 {
					p.e.add(p.name("angle"), "must be greater than -360 and less than 360, not %g", *f)
				}
			}
		}
		if i > 0 && r.Axis != "" && r.Axis == out[i-1].Axis {
			p.e.add(p.name("axis"), "two consecutive rotations must not be about the same axis (%s)", r.Axis)
		}
		out = append(out, r)
	}
	return out
}

// sizeOptions returns the model_type and the size_options object with
// model_type filled in when missing (A.15b item 6).
func sizeOptions(o object, member string) (string, json.RawMessage) {
	p, ok := parseObject(o.raw(member), o.name(member), o.e)
	if !ok {
		return "", nil
	}
	kind := p.enum("model_type", defaultKind, KindRegular, KindFullySub, KindFlexible, KindOctree)
	raw := bytes.TrimSpace(o.raw(member))
	if !p.has("model_type") {
		m := map[string]json.RawMessage{}
		for k, v := range p.m {
			m[k] = v
		}
		m["model_type"], _ = json.Marshal(kind)
		raw, _ = json.Marshal(m)
	}
	return kind, raw
}

// checkName trims a model name and checks 3-100 characters, no / or \.
func checkName(o object, member, s string) string {
	s = strings.TrimSpace(s)
	if n := len([]rune(s)); n < 3 || n > 100 {
		o.e.add(o.name(member), "must be 3-100 characters after trimming, not %d", n)
	}
	if strings.ContainsAny(s, `/\`) {
		o.e.add(o.name(member), `must not contain / or \`)
	}
	return s
}

var epsg = regexp.MustCompile(`^EPSG:([0-9]{1,5})$`)

// checkCRS checks a coordinate reference system syntactically (OPEN-40):
// EPSG:<1024…32767> or a WKT definition (KEYWORD[…]), ≤ 10,000 characters.
func checkCRS(o object, member string, s *string) {
	if s == nil {
		return
	}
	o.maxLen(member, s, maxCRS)
	if m := epsg.FindStringSubmatch(*s); m != nil {
		if n, _ := strconv.Atoi(m[1]); n < 1024 || n > 32767 {
			o.e.add(o.name(member), "EPSG code must be 1024-32767, not %d", n)
		}
		return
	}
	t := strings.TrimSpace(*s)
	i := strings.IndexAny(t, "[(")
	if i <= 0 || !strings.HasSuffix(t, "]") && !strings.HasSuffix(t, ")") || strings.ContainsAny(t[:i], " \t\n") {
		o.e.add(o.name(member), "must be EPSG:<code> or a WKT definition")
	}
}

// checkObjectPath: no . or .. segments, no //, no \, no segment ending in a
// dot.
func checkObjectPath(o object, member string, s *string) {
	if s == nil {
		return
	}
	switch {
	case strings.Contains(*s, `\`):
		o.e.add(o.name(member), `must not contain \`)
	case strings.Contains(*s, "//"):
		o.e.add(o.name(member), "must not contain //")
	default:
		for _, seg := range strings.Split(*s, "/") {
			if strings.HasSuffix(seg, ".") {
				o.e.add(o.name(member), "must not have a segment that is . or .. or ends in a dot")
				break
			}
		}
	}
}

// MetadataUpdate is the body of PATCH …/block-models/{bm} (A.9.3, the
// client's UpdateBlockModel). Every member is optional; nil means
// unchanged.
type MetadataUpdate struct {
	Name          *string
	Description   *string
	CRS           *string
	SizeUnitID    *string
	FillSubblocks *bool
	Lineage       json.RawMessage
}

// DecodeMetadataUpdate reads and checks a metadata update. An empty body
// (the client sends none for an empty update) reads as {}.
func DecodeMetadataUpdate(body []byte, rules Rules) (*MetadataUpdate, error) {
	e := &errs{}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	o, ok := parseObject(body, "", e)
	if !ok {
		if len(e.list) == 0 {
			e.add("body", "must be a JSON object")
		}
		return nil, e.err()
	}
	u := &MetadataUpdate{}
	if s := o.str("name"); s != nil {
		n := checkName(o, "name", *s)
		u.Name = &n
	}
	u.Description = o.str("description")
	o.maxLen("description", u.Description, maxDescription)
	u.CRS = o.str("coordinate_reference_system")
	checkCRS(o, "coordinate_reference_system", u.CRS)
	u.SizeUnitID = o.str("size_unit_id")
	if u.SizeUnitID != nil && !rules.LengthUnit(*u.SizeUnitID) {
		o.e.add(o.name("size_unit_id"), "must be a LENGTH unit id, not %q", *u.SizeUnitID)
	}
	u.FillSubblocks = o.boolean("fill_subblocks")
	u.Lineage = o.raw("lineage")
	if err := e.err(); err != nil {
		return nil, err
	}
	return u, nil
}

// ParseBool reads a boolean query parameter as the client spells it
// (True/False as well as true/false, any case, 1/0); a value that is no
// boolean is a *QueryError (400).
func ParseBool(name, value string) (bool, error) {
	b, err := strconv.ParseBool(strings.ToLower(value))
	if err != nil {
		return false, &QueryError{Params: []InvalidParam{{Name: name, Reason: "must be true or false, not " + strconv.Quote(value)}}}
	}
	return b, nil
}
