package objects

import (
	"fmt"

	"github.com/google/uuid"
)

// Target operations of a compute task's target attribute (docs/objects.md 4.3).
const (
	OperationCreate = "create"
	OperationUpdate = "update"
)

// AttributeTarget says where a computed attribute goes: {"operation":
// "create", "name": …} or {"operation": "update", "reference": …}.
type AttributeTarget struct {
	Operation string
	// Name of the attribute to create (create).
	Name string
	// Reference is an expression or element path of the attribute to
	// replace (update).
	Reference string
	// List is the attribute list a created attribute goes to; "" means the
	// object's primary list (locations.attributes, attributes,
	// cell_attributes).
	List string
}

// ContinuousValues describes float64 values already stored as a blob: Width
// columns (realisations) of Length rows.
type ContinuousValues struct {
	Data   string
	Length int64
	Width  int
	// Ensemble writes a continuous ensemble (attribute_type
	// "ensemble_continuous", float-array-md) even for one column; otherwise
	// Width must be 1 and a continuous attribute ("scalar") is written.
	Ensemble bool
}

// WriteContinuous writes a continuous attribute or ensemble into the object's
// document and returns it.
//
// A create appends a new attribute with a fresh UUID key and
// nan_description {"values": []} (missing values are stored as NaN), unless
// the list already has an attribute of that name: that one is replaced,
// keeping its key. An update replaces the attribute the reference names,
// keeping its name and key. A replaced continuous attribute keeps its other
// members (attribute_description, unknown members). Nothing else in the
// document changes. The values' length must match the geometry.
func (o *Object) WriteContinuous(target AttributeTarget, v ContinuousValues) (*Attribute, error) {
	if !IsDataKey(v.Data) {
		return nil, fmt.Errorf("values: data %q is not a SHA-256 key or UUID", v.Data)
	}
	if v.Width < 1 || !v.Ensemble && v.Width != 1 {
		return nil, fmt.Errorf("values: width %d is invalid for a %s attribute", v.Width, map[bool]string{true: "ensemble", false: "continuous"}[v.Ensemble])
	}
	var list, name string
	index := -1
	switch target.Operation {
	case OperationCreate:
		if target.Name == "" {
			return nil, fmt.Errorf("target: create needs a name")
		}
		list, name = target.List, target.Name
		if list == "" {
			lists := o.AttributeLists()
			if len(lists) == 0 {
				return nil, fmt.Errorf("%s objects have no attributes", o.Schema.Kind)
			}
			list = lists[0]
		}
		if !o.hasList(list) {
			return nil, fmt.Errorf("target: %s has no attribute list %q", o.Schema.Kind, list)
		}
		switch found := o.match(list, RefName, name); len(found) {
		case 0:
		case 1:
			index = found[0].Index
		default:
			return nil, fmt.Errorf("target: %d attributes named %q in %s", len(found), name, list)
		}
	case OperationUpdate:
		a, err := o.ResolveAttribute(target.Reference)
		if err != nil {
			return nil, fmt.Errorf("target: %w", err)
		}
		list, name, index = a.List, a.Name, a.Index
	default:
		return nil, fmt.Errorf("target: operation %q, want create or update", target.Operation)
	}
	want, err := o.ExpectedLength(list)
	if err != nil {
		return nil, err
	}
	if v.Length != want {
		return nil, fmt.Errorf("attribute %s[?name==%s]: length %d does not match the geometry (%d %s)", list, quoteLiteral(name), v.Length, want, o.unitName(list))
	}

	doc := cloneJSON(o.doc).(map[string]any)
	var items []any
	if cur := getPath(doc, list); cur != nil {
		var ok bool
		if items, ok = cur.([]any); !ok {
			return nil, fmt.Errorf("%s: not a list", list)
		}
	}
	attr := map[string]any{}
	if index >= 0 {
		old, ok := items[index].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: not an object", list, index)
		}
		if t, _ := old["attribute_type"].(string); t == AttributeScalar || t == AttributeEnsembleContinuous {
			attr = old
		} else if d, ok := old["attribute_description"]; ok && t == AttributeInteger {
			attr["attribute_description"] = d
		}
		if k, ok := old["key"].(string); ok && k != "" {
			attr["key"] = k
		}
	}
	if _, ok := attr["key"].(string); !ok {
		attr["key"] = uuid.NewString()
	}
	attr["name"] = name
	attr["values"] = Element{Data: v.Data, Length: v.Length, Width: v.Width, DataType: TypeFloat64}.JSON()
	attr["nan_description"] = map[string]any{"values": []any{}}
	if v.Ensemble {
		attr["attribute_type"] = AttributeEnsembleContinuous
	} else {
		attr["attribute_type"] = AttributeScalar
	}
	if index >= 0 {
		items[index] = attr
	} else {
		index = len(items)
		items = append(items, attr)
	}
	if err := setPath(doc, list, items); err != nil {
		return nil, err
	}
	raw, err := EncodeJSON(doc)
	if err != nil {
		return nil, err
	}
	updated, err := decodeWithDoc(doc, raw)
	if err != nil {
		return nil, fmt.Errorf("writing attribute %q: %w", name, err)
	}
	*o = *updated
	return &o.Attributes(list)[index], nil
}
