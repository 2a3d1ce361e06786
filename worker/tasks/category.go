package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/geostat-engine/geostat/worker/objects"
)

// categoryValues are the stored blobs of a category attribute: the keys
// (int32, one per element, NoCategory −1 for no value) and the lookup table
// (key int32, label string).
type categoryValues struct {
	Values, Table       string
	Length, TableLength int64
}

// storeCategory stores the keys and the lookup table (key k ↦ labels[k]) of
// a category attribute and returns its write.
func storeCategory(ctx context.Context, env *Env, org, ws string, target objects.AttributeTarget, keys []int32, labels []string) (attributeWrite, error) {
	k64 := make([]int64, len(keys))
	for i, k := range keys {
		k64[i] = int64(k)
	}
	tk := make([]int64, len(labels))
	for i := range tk {
		tk[i] = int64(i)
	}
	values, err := storeTable(ctx, env, org, ws, []objects.Column{{Type: objects.TypeInt32, Int64: k64}}, []string{"category"})
	if err != nil {
		return attributeWrite{}, err
	}
	table, err := storeTable(ctx, env, org, ws, []objects.Column{{Type: objects.TypeInt32, Int64: tk}, {Type: objects.TypeString, String: labels}}, []string{"key", "value"})
	if err != nil {
		return attributeWrite{}, err
	}
	return attributeWrite{Target: target, Category: &categoryValues{Values: values, Table: table, Length: int64(len(keys)), TableLength: int64(len(labels))}}, nil
}

// storeTable writes columns as one Parquet blob and returns its key.
func storeTable(ctx context.Context, env *Env, org, ws string, cols []objects.Column, names []string) (string, error) {
	sink, err := env.Store.NewBlob(ctx, org, ws)
	if err != nil {
		return "", err
	}
	types := make([]objects.DataType, len(cols))
	for i, c := range cols {
		types[i] = c.Type
	}
	tw, err := objects.NewTableWriter(sink, types, names, nil)
	if err != nil {
		sink.Abort()
		return "", err
	}
	if err := tw.WriteColumns(cols); err != nil {
		sink.Abort()
		return "", err
	}
	blob, err := tw.Close()
	if err != nil {
		sink.Abort()
		return "", err
	}
	if err := sink.Commit(ctx, blob.Key); err != nil {
		return "", err
	}
	return blob.Key, nil
}

// writeCategory writes a category attribute into the object's document, as
// WriteContinuous does a continuous one: a create appends it to the first
// attribute list with a fresh key, or replaces the attribute of that name
// (keeping its key); an update replaces the attribute the reference names,
// keeping its name and key. No value is the key −1, listed in
// nan_description.
func writeCategory(o *objects.Object, target objects.AttributeTarget, v categoryValues) (*objects.Attribute, error) {
	var list, name string
	index := -1
	switch target.Operation {
	case objects.OperationCreate:
		list, name = o.AttributeLists()[0], target.Name
		for i, a := range o.Attributes(list) {
			if a.Name == name {
				index = i
			}
		}
	case objects.OperationUpdate:
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
		return nil, fmt.Errorf("category attribute %q: length %d does not match the geometry (%d)", name, v.Length, want)
	}
	raw, err := o.JSON()
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	parent, last := doc, list
	if i := strings.LastIndex(list, "."); i >= 0 {
		for _, part := range strings.Split(list[:i], ".") {
			next, ok := parent[part].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object", part)
			}
			parent = next
		}
		last = list[i+1:]
	}
	items, _ := parent[last].([]any)
	attr := map[string]any{
		"name": name, "attribute_type": objects.AttributeCategory,
		"values":          objects.Element{Data: v.Values, Length: v.Length, Width: 1, DataType: objects.TypeInt32}.JSON(),
		"table":           objects.Element{Data: v.Table, Length: v.TableLength, KeysDataType: objects.TypeInt32, ValuesDataType: objects.TypeString}.JSON(),
		"nan_description": map[string]any{"values": []any{-1}},
	}
	if index >= 0 && index < len(items) {
		if old, ok := items[index].(map[string]any); ok {
			attr["key"] = old["key"]
		}
		items[index] = attr
	} else {
		items = append(items, attr)
	}
	if attr["key"] == nil {
		attr["key"] = uuid.NewString()
	}
	parent[last] = items
	encoded, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	updated, err := objects.Decode(encoded)
	if err != nil {
		return nil, fmt.Errorf("writing attribute %q: %w", name, err)
	}
	*o = *updated
	for i, a := range o.Attributes(list) {
		if a.Name == name {
			return &o.Attributes(list)[i], nil
		}
	}
	return nil, fmt.Errorf("writing attribute %q: not found after writing", name)
}
