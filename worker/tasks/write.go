package tasks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/store"
)

// written says where a task's result went.
type written struct {
	Org, Workspace, ObjectID string
	VersionID                string
	Object                   *objects.Object
	Attribute                *objects.Attribute
}

// storeFloat64 writes float64 columns of equal length as one Parquet blob in
// the workspace and returns its key.
func storeFloat64(ctx context.Context, env *Env, org, ws string, cols [][]float64, names []string) (string, error) {
	tc := make([]objects.Column, len(cols))
	for i, c := range cols {
		tc[i] = objects.Column{Type: objects.TypeFloat64, Float64: c}
	}
	return storeColumns(ctx, env, org, ws, tc, names)
}

// storeColumns writes columns of equal length and any types as one Parquet
// blob in the workspace and returns its key; a failed write leaves no blob.
func storeColumns(ctx context.Context, env *Env, org, ws string, cols []objects.Column, names []string) (string, error) {
	sink, err := env.Store.NewBlob(ctx, org, ws)
	if err != nil {
		return "", err
	}
	types := make([]objects.DataType, len(cols))
	for i := range cols {
		types[i] = cols[i].Type
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

func float64Types(n int) []objects.DataType {
	t := make([]objects.DataType, n)
	for i := range t {
		t[i] = objects.TypeFloat64
	}
	return t
}

// attributeWrite is one attribute to write into the target's new version:
// continuous Values, or a category attribute when Category is set.
type attributeWrite struct {
	Target   objects.AttributeTarget
	Values   objects.ContinuousValues
	Category *objects.CategoryValues
}

// commit writes attributes into a new version of the target object. It
// applies them to the latest version (retrying when another writer got
// there first), after checking that the geometry is still the one the task
// computed on. The first attribute is the task's main result.
func commit(ctx context.Context, env *Env, prepared *Version, ref ObjectRef, user store.User, writes []attributeWrite) (*written, error) {
	latestRef := ref
	latestRef.Version = ""
	if prepared.ObjectID != "" {
		latestRef.ObjectID, latestRef.Path = prepared.ObjectID, ""
	}
	for attempt := 0; attempt < 8; attempt++ {
		latest, err := env.Store.Get(ctx, latestRef)
		if err != nil {
			return nil, fmt.Errorf("reading the target: %w", err)
		}
		if err := sameGeometry(prepared.Object, latest.Object); err != nil {
			return nil, err
		}
		obj := latest.Object.Clone()
		var first *objects.Attribute
		for i, w := range writes {
			var a *objects.Attribute
			var err error
			if w.Category != nil {
				a, err = obj.WriteCategory(w.Target, *w.Category)
			} else {
				a, err = obj.WriteContinuous(w.Target, w.Values)
			}
			if err != nil {
				return nil, fmt.Errorf("writing the result attribute: %w", err)
			}
			if i == 0 {
				first = a
			}
		}
		doc, err := obj.JSON()
		if err != nil {
			return nil, err
		}
		vid, err := env.Store.PutVersion(ctx, ref.Org, ref.Workspace, latest.ObjectID, latest.VersionID, doc, user)
		if errors.Is(err, ErrStale) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("writing the target's new version: %w", err)
		}
		return &written{Org: ref.Org, Workspace: ref.Workspace, ObjectID: latest.ObjectID, VersionID: vid, Object: obj, Attribute: first}, nil
	}
	return nil, fmt.Errorf("the target object kept changing while the result was written; submit the task again")
}

// sameGeometry checks that the locations of two versions are the same: the
// schema, a grid's origin, size, cell size and rotation, and every array
// element that is not an attribute's values (coordinates, intervals, mask).
func sameGeometry(a, b *objects.Object) error {
	if a.Schema != b.Schema {
		return fmt.Errorf("the target object changed schema while the task ran")
	}
	changed := fmt.Errorf("the target object's geometry changed while the task ran")
	if ga, gb := a.Grid, b.Grid; ga != nil && (ga.Origin != gb.Origin || ga.Size != gb.Size || ga.CellSize != gb.CellSize || ga.Rotation != gb.Rotation) {
		return changed
	}
	ea, eb := geometryElements(a), geometryElements(b)
	if len(ea) != len(eb) {
		return changed
	}
	for path, key := range ea {
		if eb[path] != key {
			return changed
		}
	}
	return nil
}

// geometryElements maps the path of every array element that is not under
// an attribute list to its blob key.
func geometryElements(o *objects.Object) map[string]string {
	lists := o.AttributeLists()
	out := map[string]string{}
outer:
	for _, e := range o.Elements() {
		for _, l := range lists {
			if strings.HasPrefix(e.Path, l+"[") || strings.HasPrefix(e.Path, l+".") {
				continue outer
			}
		}
		out[e.Path] = e.Data
	}
	return out
}

// objectURL renders the reference of an object version.
func (env *Env) objectURL(org, ws, id, version string) string {
	u := fmt.Sprintf("%s/geoscience-object/orgs/%s/workspaces/%s/objects/%s", strings.TrimRight(env.PublicURL, "/"), org, ws, id)
	if version != "" {
		u += "?version=" + version
	}
	return u
}

// elementPath renders an attribute as a legacy element path,
// e.g. /cell_attributes/@name=x.
func elementPath(a *objects.Attribute) string {
	return "/" + strings.ReplaceAll(a.List, ".", "/") + "/@name=" + a.Name
}

// seedResult is the seed's task result {message, object_modified}.
func (env *Env) seedResult(w *written, message string) map[string]any {
	return map[string]any{
		"message": message,
		"object_modified": map[string]any{
			"type":             "geoscience-object-reference",
			"object_reference": env.objectURL(w.Org, w.Workspace, w.ObjectID, w.VersionID),
			"object_element":   []any{map[string]any{"type": "element", "path": elementPath(w.Attribute)}},
		},
	}
}

// targetResult is the current shape's {reference, name, description,
// schema_id} of the written object.
func (env *Env) targetResult(w *written) map[string]any {
	r := map[string]any{
		"reference":   env.objectURL(w.Org, w.Workspace, w.ObjectID, w.VersionID),
		"name":        w.Object.Name,
		"description": nil,
		"schema_id":   w.Object.Schema.String(),
	}
	if d, ok := w.Object.Doc()["description"].(string); ok {
		r["description"] = d
	}
	return r
}

// attributeTarget maps a task target onto the objects package's form.
func attributeTarget(t Target) objects.AttributeTarget {
	if t.Update != "" {
		return objects.AttributeTarget{Operation: objects.OperationUpdate, Reference: t.Update}
	}
	return objects.AttributeTarget{Operation: objects.OperationCreate, Name: t.Name}
}
