package objects

import (
	"encoding/json"
	"strconv"

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
	list, name, index, err := o.targetSlot(target, v.Length)
	if err != nil {
		return nil, err
	}
	items, attr, err := o.startAttribute(list, index, func(old map[string]any) map[string]any {
		attr := map[string]any{}
		if t, _ := old["attribute_type"].(string); t == AttributeScalar || t == AttributeEnsembleContinuous {
			attr = old
		} else if d, ok := old["attribute_description"]; ok && t == AttributeInteger {
			attr["attribute_description"] = d
		}
		return attr
	})
	if err != nil {
		return nil, err
	}
	attr["name"] = name
	attr["values"] = Element{Data: v.Data, Length: v.Length, Width: v.Width, DataType: TypeFloat64}.JSON()
	attr["nan_description"] = map[string]any{"values": []any{}}
	if v.Ensemble {
		attr["attribute_type"] = AttributeEnsembleContinuous
	} else {
		attr["attribute_type"] = AttributeScalar
	}
	return o.putAttribute(list, name, index, items, attr)
}

// targetSlot finds where a target attribute goes: its list, its name and
// the index of the attribute it replaces (-1 for a new one), checking that
// length values fit the geometry.
func (o *Object) targetSlot(target AttributeTarget, length int64) (list, name string, index int, err error) {
	index = -1
	switch target.Operation {
	case OperationCreate:
		if target.Name == "" {
			return "", "", 0, fmt.Errorf("target: create needs a name")
		}
		list, name = target.List, target.Name
		if list == "" {
			lists := o.AttributeLists()
			if len(lists) == 0 {
				return "", "", 0, fmt.Errorf("%s objects have no attributes", o.Schema.Kind)
			}
			list = lists[0]
		}
		if !o.hasList(list) {
			return "", "", 0, fmt.Errorf("target: %s has no attribute list %q", o.Schema.Kind, list)
		}
		switch found := o.match(list, RefName, name); len(found) {
		case 0:
		case 1:
			index = found[0].Index
		default:
			return "", "", 0, fmt.Errorf("target: %d attributes named %q in %s", len(found), name, list)
		}
	case OperationUpdate:
		a, err := o.ResolveAttribute(target.Reference)
		if err != nil {
			return "", "", 0, fmt.Errorf("target: %w", err)
		}
		list, name, index = a.List, a.Name, a.Index
	default:
		return "", "", 0, fmt.Errorf("target: operation %q, want create or update", target.Operation)
	}
	want, err := o.ExpectedLength(list)
	if err != nil {
		return "", "", 0, err
	}
	if length != want {
		return "", "", 0, fmt.Errorf("attribute %s[?name==%s]: length %d does not match the geometry (%d %s)", list, quoteLiteral(name), length, want, o.unitName(list))
	}

	return list, name, index, nil
}

// startAttribute returns the items of list and the JSON object a write into
// slot index of it (-1: a new attribute) starts from. For a replaced
// attribute, start(old) gives the object (which of old's members are kept)
// and old's key is kept; an attribute without a key gets a fresh UUID.
func (o *Object) startAttribute(list string, index int, start func(old map[string]any) map[string]any) (items []any, attr map[string]any, err error) {
	if items, err = o.listItems(list); err != nil {
		return nil, nil, err
	}
	attr = map[string]any{}
	if index >= 0 {
		old, ok := items[index].(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("%s[%d]: not an object", list, index)
		}
		attr = start(old)
		if k, ok := old["key"].(string); ok && k != "" {
			attr["key"] = k
		}
	}
	if _, ok := attr["key"].(string); !ok {
		attr["key"] = uuid.NewString()
	}
	return items, attr, nil
}

// listItems returns a copy of the items of an attribute list (nil when the
// list is absent).
func (o *Object) listItems(list string) ([]any, error) {
	var items []any
	if cur := getPath(cloneJSON(o.doc).(map[string]any), list); cur != nil {
		var ok bool
		if items, ok = cur.([]any); !ok {
			return nil, fmt.Errorf("%s: not a list", list)
		}
	}
	return items, nil
}

// putAttribute writes attr at index of list (appending when index < 0),
// re-decodes the document and returns the attribute written.
func (o *Object) putAttribute(list, name string, index int, items []any, attr map[string]any) (*Attribute, error) {
	doc := cloneJSON(o.doc).(map[string]any)
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

// CategoryValues describes a category attribute whose keys and lookup table
// are already stored as blobs: Data holds one int32 column of Length keys,
// Table the lookup table (an int32 key column and a string value column) of
// TableLength rows. Missing lists the key sentinels that mean "no category"
// (the attribute's nan_description).
type CategoryValues struct {
	Data        string
	Length      int64
	Table       string
	TableLength int64
	Missing     []int64
}

// WriteCategory writes a category attribute (docs/objects.md 1.4: int32 keys
// in an integer-array-1, a lookup table from key to label, nan_description
// with the missing-key sentinels) into the object's document and returns it.
// Create and update find the attribute as WriteContinuous does; a replaced
// attribute keeps its key and, when it was a category attribute, its other
// members. Nothing else in the document changes.
func (o *Object) WriteCategory(target AttributeTarget, v CategoryValues) (*Attribute, error) {
	if !IsDataKey(v.Data) || !IsDataKey(v.Table) {
		return nil, fmt.Errorf("values: data %q or table %q is not a SHA-256 key or UUID", v.Data, v.Table)
	}
	list, name, index, err := o.targetSlot(target, v.Length)
	if err != nil {
		return nil, err
	}
	items, attr, err := o.startAttribute(list, index, func(old map[string]any) map[string]any {
		if t, _ := old["attribute_type"].(string); t == AttributeCategory {
			return old
		}
		return map[string]any{}
	})
	if err != nil {
		return nil, err
	}
	missing := make([]any, len(v.Missing))
	for i, k := range v.Missing {
		missing[i] = json.Number(strconv.FormatInt(k, 10))
	}
	attr["name"] = name
	attr["attribute_type"] = AttributeCategory
	attr["values"] = Element{Data: v.Data, Length: v.Length, Width: 1, DataType: TypeInt32}.JSON()
	attr["table"] = Element{Data: v.Table, Length: v.TableLength, KeysDataType: TypeInt32, ValuesDataType: TypeString}.JSON()
	attr["nan_description"] = map[string]any{"values": missing}
	return o.putAttribute(list, name, index, items, attr)
}
