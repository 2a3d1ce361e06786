package objects

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Attribute list paths of the modelled kinds.
const (
	ListLocationAttributes = "locations.attributes" // pointset
	ListAttributes         = "attributes"           // downhole intervals
	ListCellAttributes     = "cell_attributes"      // grids
	ListVertexAttributes   = "vertex_attributes"    // regular grid only
)

// ErrUnsupportedSchema is returned (wrapped) by Decode for a schema id the
// worker does not model.
var ErrUnsupportedSchema = errors.New("unsupported object schema")

// Object is a decoded geoscience object. The document (every member, modelled
// or not) is kept as decoded JSON and is the source of truth: writing an
// attribute patches it, so a round trip changes nothing else. Exactly one of
// the kind-specific views is set, chosen by Schema.Kind.
type Object struct {
	Schema SchemaID
	Name   string
	// UUID is the object's uuid member; "" when null (not yet created).
	UUID string

	Pointset     *Pointset          // pointset
	Intervals    *DownholeIntervals // downhole-intervals
	Grid         *Grid              // regular-3d-grid and regular-masked-3d-grid
	Variogram    *Variogram         // variogram
	Distribution *Distribution      // non-parametric-continuous-cumulative-distribution

	doc map[string]any
}

// Decode decodes an object document, dispatching on its schema member. It
// checks what the worker relies on (array elements, geometry, attribute
// lengths against the geometry); full schema validation is Schemas.Validate.
// Numbers must be finite. Unknown members are preserved.
func Decode(data []byte) (*Object, error) {
	doc, err := DecodeJSON(data)
	if err != nil {
		return nil, err
	}
	return FromDoc(doc)
}

// FromDoc builds an Object from a document decoded by DecodeJSON. The Object
// takes ownership of doc.
func FromDoc(doc map[string]any) (*Object, error) {
	raw, err := EncodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("re-encoding object: %w", err)
	}
	return decodeWithDoc(doc, raw)
}

type envelopeJSON struct {
	Schema *string `json:"schema"`
	Name   *string `json:"name"`
	UUID   *string `json:"uuid"`
}

func decodeWithDoc(doc map[string]any, raw []byte) (*Object, error) {
	var env envelopeJSON
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("object envelope: %w", err)
	}
	if env.Schema == nil {
		return nil, errors.New("schema: missing")
	}
	id, err := ParseSchemaID(*env.Schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupportedSchema, err)
	}
	if !id.Supported() {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedSchema, id)
	}
	o := &Object{Schema: id, doc: doc}
	if env.Name != nil {
		o.Name = *env.Name
	}
	if env.UUID != nil {
		o.UUID = *env.UUID
	}
	switch id.Kind {
	case KindPointset:
		o.Pointset, err = decodePointset(raw)
	case KindDownholeIntervals:
		o.Intervals, err = decodeIntervals(raw)
	case KindRegular3DGrid, KindRegularMasked3DGrid:
		o.Grid, err = decodeGrid(raw, id.Kind == KindRegularMasked3DGrid)
	case KindVariogram:
		o.Variogram, err = decodeVariogram(raw)
	case KindDistribution:
		o.Distribution, err = decodeDistribution(raw)
	}
	if err != nil {
		return nil, err
	}
	if err := o.CheckLengths(); err != nil {
		return nil, err
	}
	return o, nil
}

// Doc returns the object's document. Callers must not modify it; use the
// Object's methods to change the object.
func (o *Object) Doc() map[string]any { return o.doc }

// JSON encodes the object's document.
func (o *Object) JSON() ([]byte, error) { return EncodeJSON(o.doc) }

// Clone returns a deep copy of the object.
func (o *Object) Clone() *Object {
	doc := cloneJSON(o.doc).(map[string]any)
	c, err := FromDoc(doc)
	if err != nil {
		panic("objects: Clone: re-decoding a decoded object failed: " + err.Error())
	}
	return c
}

// AttributeLists returns the paths of the object's attribute lists, the
// primary one first (empty for variograms and distributions).
func (o *Object) AttributeLists() []string {
	switch o.Schema.Kind {
	case KindPointset:
		return []string{ListLocationAttributes}
	case KindDownholeIntervals:
		return []string{ListAttributes}
	case KindRegular3DGrid:
		return []string{ListCellAttributes, ListVertexAttributes}
	case KindRegularMasked3DGrid:
		return []string{ListCellAttributes}
	}
	return nil
}

// Attributes returns the attributes of the list at path (nil for an unknown
// list).
func (o *Object) Attributes(list string) []Attribute {
	switch {
	case o.Pointset != nil && list == ListLocationAttributes:
		return o.Pointset.Attributes
	case o.Intervals != nil && list == ListAttributes:
		return o.Intervals.Attributes
	case o.Grid != nil && list == ListCellAttributes:
		return o.Grid.CellAttributes
	case o.Grid != nil && !o.Grid.Masked && list == ListVertexAttributes:
		return o.Grid.VertexAttributes
	}
	return nil
}

// hasList reports whether list is one of the object's attribute lists.
func (o *Object) hasList(list string) bool {
	for _, l := range o.AttributeLists() {
		if l == list {
			return true
		}
	}
	return false
}

// ExpectedLength returns the number of rows every attribute of list must have:
// the number of points, intervals, cells (active cells of a masked grid) or
// vertices.
func (o *Object) ExpectedLength(list string) (int64, error) {
	if !o.hasList(list) {
		return 0, fmt.Errorf("%s has no attribute list %q", o.Schema.Kind, list)
	}
	switch {
	case o.Pointset != nil:
		return o.Pointset.Coordinates.Length, nil
	case o.Intervals != nil:
		return o.Intervals.MidPoints.Length, nil
	case o.Grid != nil && list == ListVertexAttributes:
		return o.Grid.NumVertices(), nil
	case o.Grid != nil && o.Grid.Masked:
		return o.Grid.NumberOfActiveCells, nil
	case o.Grid != nil:
		return o.Grid.NumCells(), nil
	}
	return 0, fmt.Errorf("%s has no attribute list %q", o.Schema.Kind, list)
}

// CheckLengths checks every attribute's length against the geometry, and the
// geometry's own elements against each other. The error names the attribute
// or element.
func (o *Object) CheckLengths() error {
	if o.Intervals != nil {
		if err := o.Intervals.checkLengths(); err != nil {
			return err
		}
	}
	if o.Grid != nil && o.Grid.Masked {
		if err := o.Grid.checkMask(); err != nil {
			return err
		}
	}
	for _, list := range o.AttributeLists() {
		want, err := o.ExpectedLength(list)
		if err != nil {
			return err
		}
		for i := range o.Attributes(list) {
			a := &o.Attributes(list)[i]
			if a.Values != nil && a.Values.Length != want {
				return fmt.Errorf("attribute %s: length %d does not match the geometry (%d %s)", a.label(), a.Values.Length, want, o.unitName(list))
			}
		}
	}
	return nil
}

// unitName describes what one row of an attribute of list is.
func (o *Object) unitName(list string) string {
	switch {
	case o.Pointset != nil:
		return "points"
	case o.Intervals != nil:
		return "intervals"
	case list == ListVertexAttributes:
		return "vertices"
	case o.Grid != nil && o.Grid.Masked:
		return "active cells"
	}
	return "cells"
}

// Elements returns every array element the worker models in the object
// (geometry and attribute values), e.g. to check that their blobs exist.
func (o *Object) Elements() []Element {
	var out []Element
	add := func(e *Element) {
		if e != nil {
			out = append(out, *e)
		}
	}
	switch {
	case o.Pointset != nil:
		add(&o.Pointset.Coordinates)
	case o.Intervals != nil:
		iv := o.Intervals
		for _, e := range []*Element{&iv.Start, &iv.End, &iv.MidPoints, &iv.FromTo, &iv.HoleID, &iv.HoleTable} {
			add(e)
		}
	case o.Grid != nil && o.Grid.Mask != nil:
		add(o.Grid.Mask.Values)
	case o.Distribution != nil:
		add(&o.Distribution.Values)
	}
	for _, list := range o.AttributeLists() {
		for _, a := range o.Attributes(list) {
			add(a.Values)
			add(a.Table)
		}
	}
	return out
}
