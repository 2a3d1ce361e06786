package tasks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/store"
)

// written says where a task's result went.
type written struct {
	Org, Workspace, ObjectID string
	VersionID                string
	Object                   *objects.Object
	Attribute                *objects.Attribute
	// blockModel is set when the target is a block model (Object is then
	// a shell).
	blockModel *BlockModelObject
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
	types := make([]objects.DataType, len(cols))
	for i := range cols {
		types[i] = cols[i].Type
	}
	b, err := openBlob(ctx, env, org, ws, types, names)
	if err != nil {
		return "", err
	}
	defer b.abort()
	if err := b.tw.WriteColumns(cols); err != nil {
		return "", err
	}
	return b.commit(ctx)
}

// streamBlob is a blob being written by a TableWriter.
type streamBlob struct {
	sink BlobSink
	tw   *objects.TableWriter
}

// openBlob starts a Parquet blob of the given column types and names.
func openBlob(ctx context.Context, env *Env, org, ws string, types []objects.DataType, names []string) (*streamBlob, error) {
	sink, err := env.Store.NewBlob(ctx, org, ws)
	if err != nil {
		return nil, err
	}
	tw, err := objects.NewTableWriter(sink, types, names, nil)
	if err != nil {
		sink.Abort()
		return nil, err
	}
	return &streamBlob{sink: sink, tw: tw}, nil
}

// commit finishes the blob and returns its key.
func (b *streamBlob) commit(ctx context.Context) (string, error) {
	blob, err := b.tw.Close()
	if err != nil {
		return "", err
	}
	if err := b.sink.Commit(ctx, blob.Key); err != nil {
		return "", err
	}
	b.sink = nil
	return blob.Key, nil
}

// abort drops the blob unless it is stored (b may be nil).
func (b *streamBlob) abort() {
	if b != nil && b.sink != nil {
		b.sink.Abort()
		b.sink = nil
	}
}

// attributeWrite is one attribute to write into the target's new version:
// continuous Values, or a category attribute when Category is set.
type attributeWrite struct {
	Target objects.AttributeTarget
	// Values are the stored values; when Keep is set, commit stores them
	// from Column instead.
	Values objects.ContinuousValues
	// Column holds the computed values of a filtered write (one per
	// target row) and Keep the rows the target filter selected. Commit
	// writes Column on the selected rows; on the others an update keeps the
	// attribute's values in the latest version (as does a create when
	// Merge is set and an attribute of that name exists there), anything
	// else gets no value (NaN).
	Column []float64
	Keep   []bool
	Merge  bool
	// Category, when set, writes a category attribute instead (Values,
	// Column and Keep unused).
	Category *objects.CategoryValues
}

// filtered returns the column a filtered write stores into the latest
// version: the computed values on the selected rows, the latest version's
// values of the attribute elsewhere when it is kept, else NaN.
func (w *attributeWrite) filtered(ctx context.Context, latest *Version) ([]float64, error) {
	out := append([]float64(nil), w.Column...)
	var prev []float64
	var a *objects.Attribute
	var err error
	switch {
	case w.Target.Operation == objects.OperationUpdate:
		a, err = latest.Object.ResolveAttribute(w.Target.Reference)
		if err != nil {
			return nil, fmt.Errorf("the target attribute %q disappeared while the task ran: %w", w.Target.Reference, err)
		}
	case w.Merge:
		// A create writes into the object's first attribute list.
		attrs := latest.Object.Attributes(latest.Object.AttributeLists()[0])
		for i := range attrs {
			if attrs[i].Name == w.Target.Name {
				a = &attrs[i]
			}
		}
	}
	if a != nil && (a.IsContinuous() || a.Type == objects.AttributeInteger) && a.Width() == 1 {
		cols, err := latest.Object.ReadContinuous(ctx, latest.Blobs, a)
		if err != nil {
			return nil, fmt.Errorf("reading the target attribute %q: %w", a.Name, err)
		}
		if len(cols[0]) == len(out) {
			prev = cols[0]
		}
	}
	for i, k := range w.Keep {
		if !k {
			out[i] = math.NaN()
			if prev != nil {
				out[i] = prev[i]
			}
		}
	}
	return out, nil
}

// commit writes attributes into a new version of the target object. It
// applies them to the latest version, after checking that the geometry is
// still the one the task computed on: writers of one object inside this
// worker take turns (a lock per object), and a version written meanwhile by
// anyone else (the object API) makes it re-read the latest version and
// apply the writes again (If-Match). So concurrent jobs writing different
// attributes of one object, or one attribute through disjoint target
// filters, all keep their results. The first attribute is the task's main
// result.
func commit(ctx context.Context, env *Env, prepared *Version, ref ObjectRef, user store.User, writes []attributeWrite) (*written, error) {
	latestRef := ref
	latestRef.Version = ""
	if prepared.ObjectID != "" {
		latestRef.ObjectID, latestRef.Path = prepared.ObjectID, ""
	}
	unlock, err := env.writeLocks.lock(ctx, ref.Org+"/"+ref.Workspace+"/"+prepared.ObjectID)
	if err != nil {
		return nil, err
	}
	defer unlock()
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
			if w.Keep != nil {
				col, err := w.filtered(ctx, latest)
				if err != nil {
					return nil, err
				}
				key, err := storeFloat64(ctx, env, ref.Org, ref.Workspace, [][]float64{col}, []string{valuesColumn})
				if err != nil {
					return nil, err
				}
				w.Values = objects.ContinuousValues{Data: key, Length: int64(len(col)), Width: 1}
			}
			var a *objects.Attribute
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
	doc := w.Object.Doc()
	if w.blockModel != nil {
		doc = w.blockModel.Doc
	}
	if d, ok := doc["description"].(string); ok {
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

// keyedLocks serialises the writers of one object inside a worker: one
// channel (a mutex that honours cancellation) per key while it is held.
type keyedLocks struct {
	mu   sync.Mutex
	held map[string]*keyedLock
}

type keyedLock struct {
	ch      chan struct{}
	waiters int
}

func newKeyedLocks() *keyedLocks { return &keyedLocks{held: map[string]*keyedLock{}} }

// lock takes the lock of key, waiting for its holder; a nil *keyedLocks
// does not lock. The returned function releases it.
func (k *keyedLocks) lock(ctx context.Context, key string) (func(), error) {
	if k == nil {
		return func() {}, nil
	}
	k.mu.Lock()
	l := k.held[key]
	if l == nil {
		l = &keyedLock{ch: make(chan struct{}, 1)}
		k.held[key] = l
	}
	l.waiters++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if l.waiters--; l.waiters == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
