package bmwire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

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
	ModelOrigin   blockmodel.XYZ
	BlockRotation []blockmodel.RotationItem
	// SizeOptions are the decoded size options, model_type "regular" when
	// the member was missing (as the client's models default it).
	SizeOptions blockmodel.SizeOptions
	// Lineage is the deprecated lineage member, stored, never interpreted.
	Lineage json.RawMessage
}

// DecodeCreate reads and checks a create body: name (3-100 characters
// after trimming, no / or \), model_origin, block_rotation
// (blockmodel.DecodeRotation), description ≤ 500, comment ≤ 250,
// coordinate_reference_system (blockmodel.CheckCRS), size_unit_id
// (blockmodel.CheckSizeUnit), object_path, size_options
// (blockmodel.DecodeSizeOptions). All failures are listed in one
// *blockmodel.ValidationError.
func DecodeCreate(body []byte) (*Create, error) {
	return decodeBody(body, func(o object, e *blockmodel.ValidationError) *Create {
		c := &Create{}
		if s := o.requiredStr("name"); s != nil {
			c.Name = checkName(o, "name", *s)
		}
		c.Description = o.str("description")
		o.maxLen("description", c.Description, maxDescription)
		c.Comment = o.str("comment")
		o.maxLen("comment", c.Comment, maxComment)
		c.CRS, c.SizeUnitID = modelMembers(o)
		if b := o.boolean("fill_subblocks"); b != nil {
			c.FillSubblocks = *b
		}
		c.ObjectPath = o.str("object_path")
		checkObjectPath(o, "object_path", c.ObjectPath)
		if o.required("model_origin") {
			v, err := blockmodel.DecodeXYZ(o.raw("model_origin"), o.name("model_origin"))
			e.Params = append(e.Params, invalid(err)...)
			c.ModelOrigin = v
		}
		rot, err := blockmodel.DecodeRotation(o.raw("block_rotation"), o.name("block_rotation"))
		e.Params = append(e.Params, invalid(err)...)
		c.BlockRotation = rot
		if o.required("size_options") {
			so, err := blockmodel.DecodeSizeOptions(o.raw("size_options"), o.name("size_options"))
			e.Params = append(e.Params, invalid(err)...)
			c.SizeOptions = so
		}
		c.Lineage = o.raw("lineage")
		return c
	})
}

// invalid returns the invalid members of a *ValidationError (none for nil).
func invalid(err error) []blockmodel.InvalidParam {
	if err == nil {
		return nil
	}
	return err.(*blockmodel.ValidationError).Params
}

// modelMembers reads the members a create and a metadata update share:
// coordinate_reference_system and size_unit_id.
func modelMembers(o object) (crs, sizeUnit *string) {
	crs = o.str("coordinate_reference_system")
	if crs != nil {
		if err := blockmodel.CheckCRS(*crs); err != nil {
			o.e.Add(o.name("coordinate_reference_system"), "%v", err)
		}
	}
	sizeUnit = o.str("size_unit_id")
	if sizeUnit != nil {
		if err := blockmodel.CheckSizeUnit(*sizeUnit); err != nil {
			o.e.Add(o.name("size_unit_id"), "%v", err)
		}
	}
	return crs, sizeUnit
}

// checkName trims a model name and checks 3-100 characters, no / or \.
func checkName(o object, member, s string) string {
	s = strings.TrimSpace(s)
	if n := len([]rune(s)); n < 3 || n > 100 {
		o.e.Add(o.name(member), "must be 3-100 characters after trimming, not %d", n)
	}
	if strings.ContainsAny(s, `/\`) {
		o.e.Add(o.name(member), `must not contain / or \`)
	}
	return s
}

// checkObjectPath: no . or .. segments, no //, no \, no segment ending in a
// dot.
func checkObjectPath(o object, member string, s *string) {
	if s == nil {
		return
	}
	switch {
	case strings.Contains(*s, `\`):
		o.e.Add(o.name(member), `must not contain \`)
	case strings.Contains(*s, "//"):
		o.e.Add(o.name(member), "must not contain //")
	default:
		for _, seg := range strings.Split(*s, "/") {
			if strings.HasSuffix(seg, ".") {
				o.e.Add(o.name(member), "must not have a segment that is . or .. or ends in a dot")
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
func DecodeMetadataUpdate(body []byte) (*MetadataUpdate, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	return decodeBody(body, func(o object, e *blockmodel.ValidationError) *MetadataUpdate {
		u := &MetadataUpdate{}
		if s := o.str("name"); s != nil {
			n := checkName(o, "name", *s)
			u.Name = &n
		}
		u.Description = o.str("description")
		o.maxLen("description", u.Description, maxDescription)
		u.CRS, u.SizeUnitID = modelMembers(o)
		u.FillSubblocks = o.boolean("fill_subblocks")
		u.Lineage = o.raw("lineage")
		return u
	})
}

// ParseBool reads a boolean query parameter as the client spells it
// (True/False as well as true/false, any case, 1/0); a value that is no
// boolean is a *QueryError (400).
func ParseBool(name, value string) (bool, error) {
	b, err := strconv.ParseBool(strings.ToLower(value))
	if err != nil {
		return false, &QueryError{Params: []blockmodel.InvalidParam{{Name: name, Reason: "must be true or false, not " + strconv.Quote(value)}}}
	}
	return b, nil
}
