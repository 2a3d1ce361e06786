package tasks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// KindBlockModel is the kind of a block model's geoscience object
// (/objects/block-model/1.0.0, A.13): it holds no data, only the model's
// geometry, its attributes (the user columns of one version) and the uuids
// of the model and of that version. Tasks that accept it read and write the
// model in the embedded block model area (BlockModels).
const KindBlockModel objects.Kind = "block-model"

// BlockModelObject is a block model's geoscience object as the tasks read
// it: the document and the members that lead to the model.
type BlockModelObject struct {
	// Doc is the decoded document.
	Doc map[string]any
	// ModelUUID is block_model_uuid; VersionUUID block_model_version_uuid
	// ("" when absent: a source then reads the latest version).
	ModelUUID, VersionUUID string
}

// BlockModels is the embedded block model area as the compute tasks use it
// (A.14). The service implements it over the area's store (package bmapi);
// it is nil when block models cannot be used (a remote object store,
// -objects-url), and a block model reference is then refused with 422.
type BlockModels interface {
	// Open returns the model modelUUID of workspace (org, workspace). A
	// model that does not exist, is deleted or belongs to another
	// workspace is an error wrapping ErrNotFound.
	Open(ctx context.Context, org, workspace, modelUUID string) (*BlockModel, error)
	// WriteColumn writes one task result column as the model's new version
	// (bmjob.WriteColumn on the latest version, under the model's job
	// serialisation, so that concurrent writers each add their column),
	// then the linked geoscience object's new version mirroring it (A.13),
	// and says where both went. On error nothing is written (a failure
	// after the model version is committed is the implementation's to
	// repair, as for any model version whose object version is missing).
	// by is the job's submitter (w.CreatedBy is its id), the author of both
	// versions.
	WriteColumn(ctx context.Context, m *BlockModel, w bmjob.ColumnWrite, by store.User) (*BlockModelWrite, error)
}

// BlockModel is an open block model: the store holding it, its id there
// and its geometry.
type BlockModel struct {
	Store *bmstore.Store
	// ModelID is the model's id in Store (its bm_uuid).
	ModelID  string
	Geometry *blockmodel.Geometry
}

// BlockModelWrite is where BlockModels.WriteColumn wrote: the model's new
// version and the linked object's new version.
type BlockModelWrite struct {
	Version                   *bmstore.Version
	ObjectID, ObjectVersionID string
}

// blockModelSchema is the schema id of the block model object.
var blockModelSchema = objects.SchemaID{Kind: KindBlockModel, Version: "1.0.0"}

// decodeBlockModelObject decodes a block model object document into a
// Version's Object (a shell holding the schema and name: the object has no
// data the objects package models) and BlockModel. ok is false when the
// document is not a block model object.
func decodeBlockModelObject(data []byte) (obj *objects.Object, bm *BlockModelObject, ok bool, err error) {
	doc, err := objects.DecodeJSON(data)
	if err != nil {
		return nil, nil, false, nil
	}
	s, _ := doc["schema"].(string)
	id, err := objects.ParseSchemaID(s)
	if err != nil || id.Kind != KindBlockModel {
		return nil, nil, false, nil
	}
	bm = &BlockModelObject{Doc: doc}
	bm.ModelUUID, _ = doc["block_model_uuid"].(string)
	bm.VersionUUID, _ = doc["block_model_version_uuid"].(string)
	if !IsUUID(bm.ModelUUID) {
		return nil, nil, true, &objects.DataError{Err: fmt.Errorf("block_model_uuid: %q is not a UUID", bm.ModelUUID)}
	}
	obj = &objects.Object{Schema: id}
	obj.Name, _ = doc["name"].(string)
	obj.UUID, _ = doc["uuid"].(string)
	return obj, bm, true, nil
}

// Kinds accepted by the estimators (knn, idw, kriging): sources are point
// sets, downhole intervals and block models; targets those or either grid
// kind (A.14.2).
var (
	estimateSourceKinds = append(append([]objects.Kind{}, pointKinds...), KindBlockModel)
	estimateTargetKinds = append(append([]objects.Kind{}, targetKinds...), KindBlockModel)
)

// bmEnd is a task's source or target that is a block model: the object
// version referenced, the model and the version read, and the column.
type bmEnd struct {
	field   string // "source" or "target"
	object  *Version
	ref     ObjectRef
	model   *BlockModel
	version *bmstore.Version
	// title is the source column, or the target column (the created name,
	// or the existing column an update names); create says which.
	title  string
	create bool
}

// bmInvalidData is a 422 invalid-data naming field.member of the block
// model object of field.
func bmInvalidData(field, member string, v *Version, format string, args ...any) error {
	name := v.Path
	if name == "" {
		name = v.ObjectID
	}
	detail := fmt.Sprintf(format, args...)
	return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
		Detail: fmt.Sprintf("%s: the block model object %s cannot be used: %s", field, name, detail),
		Extra: map[string]any{"field": field, "object": name, "member": member,
			"invalid-params": []InvalidParam{{Name: field + "." + member, Reason: detail}}}}
}

// openBlockModel resolves a block model object of a task field to its model
// in the same workspace (A.14.3): a source reads the version the object
// mirrors (the latest when the object names none), a target the latest.
func openBlockModel(ctx context.Context, env *Env, field string, v *Version, ref ObjectRef, target bool) (*bmEnd, error) {
	e := &bmEnd{field: field, object: v, ref: ref}
	m, err := env.BlockModels.Open(ctx, ref.Org, ref.Workspace, v.BlockModel.ModelUUID)
	if errors.Is(err, ErrNotFound) {
		return nil, bmInvalidData(field, "block_model_uuid", v, "block model %s is not a block model of workspace %s (it does not exist, is deleted or belongs to another workspace)",
			v.BlockModel.ModelUUID, ref.Workspace)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: block model %s: %w", field, v.BlockModel.ModelUUID, err)
	}
	e.model = m
	if target {
		return e, e.latest()
	}
	return e, e.find(v.BlockModel.VersionUUID)
}

// find sets the version read: the one of version_uuid uuid, the latest
// when uuid is empty.
func (e *bmEnd) find(uuid string) error {
	bv, err := bmjob.FindVersion(e.model.Store, e.model.ModelID, uuid)
	if uuid != "" && errors.Is(err, bmstore.ErrNotFound) {
		return bmInvalidData(e.field, "block_model_version_uuid", e.object, "block model %s has no version %s", e.model.ModelID, uuid)
	}
	if err != nil {
		return fmt.Errorf("%s: version of block model %s: %w", e.field, e.model.ModelID, err)
	}
	e.version = bv
	return nil
}

// latest sets the model's latest version as the one read.
func (e *bmEnd) latest() error { return e.find("") }

// rows returns the number of rows of the version read.
func (e *bmEnd) rows() int64 { return e.version.Rows }

// column resolves an attribute expression (attributes[?name=='x'],
// /attributes/@name=x, a key or an index, or a bare title or col_id) to a
// user column of the version read; field names the member in the error.
func (e *bmEnd) column(field, expr string) (bmstore.ColumnMeta, error) {
	cols := e.version.UserColumns()
	r, err := objects.ParseAttributeRef(expr)
	if err != nil {
		return bmstore.ColumnMeta{}, invalid(field, "%v", err)
	}
	if r.Kind != objects.RefBare && r.List != "attributes" {
		return bmstore.ColumnMeta{}, invalid(field, "a block model has one attribute list, attributes (got %q)", r.List)
	}
	find := func(match func(c bmstore.ColumnMeta) bool) (bmstore.ColumnMeta, bool) {
		for _, c := range cols {
			if match(c) {
				return c, true
			}
		}
		return bmstore.ColumnMeta{}, false
	}
	var c bmstore.ColumnMeta
	ok := false
	switch r.Kind {
	case objects.RefBare, objects.RefName:
		if c, ok = find(func(c bmstore.ColumnMeta) bool { return c.Title == r.Value }); !ok {
			c, ok = find(func(c bmstore.ColumnMeta) bool { return strings.EqualFold(c.Title, r.Value) })
		}
		if !ok && r.Kind == objects.RefBare {
			c, ok = find(func(c bmstore.ColumnMeta) bool { return c.ColID == r.Value })
		}
	case objects.RefKey:
		c, ok = find(func(c bmstore.ColumnMeta) bool { return c.ColID == r.Value })
	case objects.RefIndex:
		i := r.Index
		if i < 0 {
			i += len(cols)
		}
		if ok = i >= 0 && i < len(cols); ok {
			c = cols[i]
		}
	}
	if !ok {
		return c, invalid(field, "block model %s (version %d) has no column %s; its columns: %s", e.model.ModelID, e.version.VersionID, r, columnTitles(cols))
	}
	return c, nil
}

// columnTitles lists column titles for messages.
func columnTitles(cols []bmstore.ColumnMeta) string {
	if len(cols) == 0 {
		return "none"
	}
	names := make([]string, 0, len(cols))
	for _, c := range cols {
		names = append(names, fmt.Sprintf("%q (%s)", c.Title, c.DataType))
	}
	return strings.Join(names, ", ")
}

// sourceColumn resolves a source attribute: a numeric column (A.14.3 step
// 4).
func (e *bmEnd) sourceColumn(field, expr string) error {
	c, err := e.column(field, expr)
	if err != nil {
		return err
	}
	if !c.DataType.Numeric() {
		return invalid(field, "column %q is a %s column, not a continuous column (want an integer or float column)", c.Title, c.DataType)
	}
	e.title = c.Title
	return nil
}

// isFloat reports whether a column type can hold a task's estimate.
func isFloat(t blockmodel.DataType) bool { return t == blockmodel.Float64 || t == blockmodel.Float32 }

// targetColumn checks a target attribute against the latest version
// (A.14.3 step 6): an update names an existing Float64 or Float32 column;
// a create names a valid title, and an existing column of that title must
// be Float64 or Float32 (it is then updated in place).
func (e *bmEnd) targetColumn(t Target) error {
	if t.Update != "" {
		c, err := e.column("target.attribute.reference", t.Update)
		if err != nil {
			return err
		}
		if !isFloat(c.DataType) {
			return invalid("target.attribute.reference", "column %q is a %s column; only Float64 or Float32 columns can be updated", c.Title, c.DataType)
		}
		e.title = c.Title
		return nil
	}
	e.create, e.title = true, t.Name
	if err := blockmodel.ValidateTitle(t.Name); err != nil {
		return invalid("target.attribute.name", "%v", err)
	}
	if blockmodel.IsSystemColumn(t.Name) {
		return invalid("target.attribute.name", "%q is a system column of block models", t.Name)
	}
	for _, c := range e.version.UserColumns() {
		if strings.EqualFold(c.Title, t.Name) {
			if !isFloat(c.DataType) {
				return invalid("target.attribute.name", "a %s column %q exists: a task creates Float64 columns and updates only Float64 or Float32 ones", c.DataType, c.Title)
			}
			e.title = c.Title
		}
	}
	return nil
}

// blocks reads the rows of the version read.
func (e *bmEnd) blocks(ctx context.Context) (*blockmodel.Blocks, error) {
	b, err := bmjob.Rows(ctx, e.model.Store, e.model.ModelID, e.version, e.model.Geometry)
	if err != nil {
		return nil, bmInvalidData(e.field, "block_model_uuid", e.object, "reading the rows of version %d: %v", e.version.VersionID, err)
	}
	return b, nil
}

// centroids returns the world centroids of the rows, flat xyz.
func centroids(b *blockmodel.Blocks) []float64 {
	n := b.NumRows()
	out := make([]float64, 0, 3*n)
	for r := int64(0); r < n; r++ {
		c := b.Centroid(r)
		out = append(out, c[0], c[1], c[2])
	}
	return out
}

// readFloat64 reads a numeric column of the version read.
func (e *bmEnd) readFloat64(ctx context.Context, field, title string) ([]float64, error) {
	v, err := bmjob.ReadFloat64(ctx, e.model.Store, e.model.ModelID, e.version, title)
	switch {
	case errors.Is(err, bmjob.ErrNotContinuous):
		return nil, invalid(field, "column %q is not a continuous column", title)
	case errors.Is(err, bmjob.ErrColumnNotFound):
		return nil, invalid(field, "block model %s (version %d) has no column %q", e.model.ModelID, e.version.VersionID, title)
	case err != nil:
		return nil, fmt.Errorf("%s: reading column %q of block model %s: %w", field, title, e.model.ModelID, err)
	}
	if int64(len(v)) != e.version.Rows {
		return nil, bmInvalidData(e.field, "block_model_uuid", e.object, "column %q has %d values for %d rows", title, len(v), e.version.Rows)
	}
	return v, nil
}

// filter evaluates a filter on the block model's columns (A.14.3 step 5):
// numeric columns compare as numbers, Boolean as 1/0, Utf8 columns are
// categories whose names are their values; a null fails every condition.
// It returns nil when there is no filter.
func (e *bmEnd) filter(ctx context.Context, field string, f *Filter) ([]bool, error) {
	if f == nil {
		return nil, nil
	}
	return f.Eval(int(e.version.Rows), func(expr string) (*Column, error) {
		c, err := e.column(field, expr)
		if err != nil {
			return nil, err
		}
		switch {
		case c.DataType.Numeric():
			v, err := e.readFloat64(ctx, field, c.Title)
			if err != nil {
				return nil, err
			}
			return &Column{Numeric: v}, nil
		case c.DataType == blockmodel.Utf8 || c.DataType == blockmodel.Boolean:
			cat, err := bmjob.ReadCategories(ctx, e.model.Store, e.model.ModelID, e.version, c.Title)
			if err != nil {
				return nil, fmt.Errorf("%s: reading column %q of block model %s: %w", field, c.Title, e.model.ModelID, err)
			}
			return &Column{Keys: cat.Keys, Names: cat.Names, Valid: cat.Valid}, nil
		}
		return nil, invalid(field, "filter column %q is a %s column; filters read numeric, Boolean or Utf8 columns", c.Title, c.DataType)
	})
}

// sourceData reads a block model source: the rows' centroids and the
// column's values, NaN where null or outside the source filter, and checks
// that a finite value remains.
func (e *bmEnd) sourceData(ctx context.Context, f *Filter) (coords, values []float64, err error) {
	b, err := e.blocks(ctx)
	if err != nil {
		return nil, nil, err
	}
	if values, err = e.readFloat64(ctx, "source.attribute", e.title); err != nil {
		return nil, nil, err
	}
	keep, err := e.filter(ctx, "source.filter", f)
	if err != nil {
		return nil, nil, err
	}
	maskOut(values, keep)
	if !slices.ContainsFunc(values, func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }) {
		return nil, nil, bmInvalidData(e.field, "attributes", e.object, "column %q has no finite value (after the filter): there is nothing to estimate from", e.title)
	}
	return centroids(b), values, nil
}

// commit writes a task's result column into the target model (A.14.5):
// one new model version, then one new object version, through
// BlockModels.WriteColumn. keep is the target filter's selection (nil:
// every row).
func (e *bmEnd) commit(ctx context.Context, env *Env, req Request, task string, rows *blockmodel.Blocks, values []float64, keep []bool) (*written, error) {
	op, verb := bmjob.OpUpdate, "updated"
	if e.create {
		op, verb = bmjob.OpCreate, "created"
		if _, exists := e.version.Column(e.title); exists {
			verb = "updated"
		}
	}
	id, _ := jobs.IDFrom(ctx)
	w, err := env.BlockModels.WriteColumn(ctx, e.model, bmjob.ColumnWrite{
		ModelID: e.model.ModelID, Rows: rows, Operation: op, Title: e.title, Values: values, Selected: keep,
		Comment:   fmt.Sprintf("%s (compute job %s): %s column %s", task, id, verb, e.title),
		CreatedBy: req.User.ID,
	}, req.User)
	switch {
	case errors.Is(err, bmjob.ErrGeometryChanged):
		return nil, bmInvalidData("target", "geometry", e.object, "block model geometry changed while the task ran: nothing was written")
	case errors.Is(err, bmjob.ErrColumnType), errors.Is(err, bmjob.ErrColumnNotFound):
		field := "target.attribute.name"
		if !e.create {
			field = "target.attribute.reference"
		}
		return nil, invalid(field, "column %q: %v", e.title, err)
	case err != nil:
		return nil, fmt.Errorf("writing the result column %q into block model %s: %w", e.title, e.model.ModelID, err)
	}
	ref := e.ref
	v, err := env.Store.Get(ctx, ObjectRef{Raw: ref.Raw, Org: ref.Org, Workspace: ref.Workspace, ObjectID: w.ObjectID, Version: w.ObjectVersionID})
	if err != nil {
		return nil, fmt.Errorf("reading the block model object's new version: %w", err)
	}
	return &written{Org: ref.Org, Workspace: ref.Workspace, ObjectID: w.ObjectID, VersionID: w.ObjectVersionID, Object: v.Object,
		Attribute: &objects.Attribute{Name: e.title, List: "attributes"}, blockModel: v.BlockModel}, nil
}

// checkFilter checks at submit that every condition of a filter names a
// column of the version read that filters can compare.
func (e *bmEnd) checkFilter(field string, f *Filter) error {
	if f == nil {
		return nil
	}
	if f.Type == "all_of" || f.Type == "any_of" {
		for _, sub := range f.Filters {
			if err := e.checkFilter(field, sub); err != nil {
				return err
			}
		}
		return nil
	}
	c, err := e.column(field, f.Attribute)
	if err != nil {
		return err
	}
	if !c.DataType.Numeric() && c.DataType != blockmodel.Utf8 && c.DataType != blockmodel.Boolean {
		return invalid(field, "filter column %q is a %s column; filters read numeric, Boolean or Utf8 columns", c.Title, c.DataType)
	}
	return nil
}

// readTargets reads a block model target into e (A.14.3, A.14.4): the rows
// of the model's latest version (read again when the job runs: writes go
// to the latest state), their centroids as targets and the target filter's
// selection. In a cluster, a large target is estimated as tiles of
// points.
func (e *bmEnd) readTargets(ctx context.Context, env *Env, t Target, in *estimation) error {
	if err := e.latest(); err != nil {
		return err
	}
	b, err := e.blocks(ctx)
	if err != nil {
		return err
	}
	in.blocks, in.targets, in.n = b, centroids(b), int(b.NumRows())
	if env.tiled(in.n) {
		in.tiled, in.target = true, tilejob.Target{Points: in.targets}
	}
	if in.keep, err = e.filter(ctx, "target.filter", t.Filter); err != nil {
		return err
	}
	return nil
}

// blockModelAttributeDescription returns the attribute_description of the
// attribute named title in a block model object document (nil when it has
// none).
func blockModelAttributeDescription(doc map[string]any, title string) any {
	list, _ := doc["attributes"].([]any)
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && m["name"] == title {
			return m["attribute_description"]
		}
	}
	return nil
}
