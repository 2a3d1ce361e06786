package tasks

// The variogram-model task: experimental semivariograms of a source's
// samples along the requested directions (geostat/variogram.Compute) and a
// nested model fitted to them (variogram.Fit), written as two new objects,
// an experimental-variogram and a variogram. Its request members are
// declared in rules.go (variogramModelRequest); docs/api.md documents the
// task.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/variogram"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// Limits of the variogram-model task.
const (
	// MaxVariogramDirections bounds the directions of one request.
	MaxVariogramDirections = 100
	// MaxVariogramLags bounds the lags of a direction (the library's limit).
	MaxVariogramLags = 10000
)

// Schema versions the variogram-model task writes. The variogram's 1.2.0
// structures use the rotation component 1.1.0 (pitch up to 360°), which
// the fitted rotations need.
var (
	experimentalVariogramSchema = objects.SchemaID{Kind: "experimental-variogram", Version: "1.0.0"}
	fittedVariogramSchema       = objects.SchemaID{Kind: objects.KindVariogram, Version: "1.2.0"}
)

// VariogramModelTarget is an object a task creates: at the path of Reference, or as
// a new version of the object Reference names when Overwrite is set.
type VariogramModelTarget struct {
	Reference   ObjectRef
	Overwrite   bool
	Description string
	Tags        map[string]string
}

// VariogramModelParams are the parameters of the variogram-model task.
type VariogramModelParams struct {
	Source Source
	// Weights is the expression of the declustering weights ("" = none).
	Weights string
	// Distribution, when set, transforms the values to normal scores.
	Distribution *ObjectRef
	Compute      variogram.Params
	Fit          variogram.FitParams
	// SillGiven says whether sill_constraint was given (else it follows
	// the distribution).
	SillGiven    bool
	Experimental VariogramModelTarget
	Variogram    VariogramModelTarget
}

// DecodeVariogramModel decodes and checks a variogram-model request
// (current shape only).
func DecodeVariogramModel(raw []byte) (*VariogramModelParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "variogram-model"), &p)
	out := &VariogramModelParams{}
	if f.need("source") {
		s := f.sub("source")
		out.Source = Source{Object: s.objectURL("object"), Attribute: s.str("attribute"), Filter: s.filter("filter")}
		out.Weights = s.str("weights")
	}
	if s, ok := f.strOK("distribution"); ok {
		d, err := ParseObjectRef(s)
		if err != nil {
			p.add(f.name("distribution"), "%v", err)
		}
		out.Distribution = &d
	}
	out.Compute.Directions = f.variogramDirections("directions")
	if f.need("lags") {
		l := f.sub("lags")
		out.Compute.LagDistance, _ = l.number("lag_distance")
		out.Compute.NLags = int(l.integer("number_of_lags"))
		out.Compute.LagTolerance, _ = l.number("lag_tolerance")
	}
	if f.need("model") {
		out.Fit, out.SillGiven = f.sub("model").variogramFit(out.Compute.Directions)
	}
	if f.need("target") {
		t := f.sub("target")
		out.Experimental = t.variogramTarget("experimental_variogram")
		out.Variogram = t.variogramTarget("variogram")
		a, b := out.Experimental.Reference, out.Variogram.Reference
		if a.Raw != "" && b.Raw != "" && a.Org == b.Org && strings.EqualFold(a.Workspace, b.Workspace) &&
			strings.EqualFold(a.ObjectID, b.ObjectID) && strings.EqualFold(a.Path, b.Path) {
			p.add(t.name("variogram.reference"), "must differ from experimental_variogram.reference")
		}
	}
	return out, p.err()
}

// variogramDirections decodes the directions list: each item is the string
// "omnidirectional" or a direction object whose absent members take their
// rule's default (no band limit without bandwidth or bandheight).
func (f *fields) variogramDirections(key string) []variogram.Direction {
	if !f.need(key) {
		return nil
	}
	raw, _ := f.raw(key)
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		f.p.add(f.name(key), "must be a list of directions")
		return nil
	}
	rl := f.rule(key)
	if len(items) < rl.minItems || len(items) > rl.maxItems {
		f.p.add(f.name(key), "must hold 1 to %d directions (got %d)", rl.maxItems, len(items))
	}
	var dirObj *object
	for _, a := range rl.items.alts {
		if a.kind == kObject {
			dirObj = a.obj
		}
	}
	out := make([]variogram.Direction, len(items))
	for i, item := range items {
		name := fmt.Sprintf("%s[%d]", f.name(key), i)
		var s string
		switch {
		case len(item) == 0 || string(item) == "null":
			f.p.add(name, "is required")
			continue
		case json.Unmarshal(item, &s) == nil:
			if s != string(variogram.Omnidirectional) {
				f.p.add(name, "must be a direction object or \"omnidirectional\" (got %q)", s)
			}
			out[i] = variogram.Direction{Type: variogram.Omnidirectional}
			continue
		}
		d := newFields(item, name, f.p, dirObj)
		dir := variogram.Direction{Type: variogram.Directional, Bandwidth: math.Inf(1), BandHeight: math.Inf(1)}
		dir.Azimuth, _ = d.number("azimuth")
		num := func(key string, dst *float64) {
			if v, ok := d.number(key); ok {
				*dst = v
			} else if !d.has(key) && d.rule(key).def != nil {
				*dst = d.rule(key).def.(float64)
			}
		}
		num("dip", &dir.Dip)
		num("azimuth_tolerance", &dir.AzimuthTolerance)
		num("dip_tolerance", &dir.DipTolerance)
		num("bandwidth", &dir.Bandwidth)
		num("bandheight", &dir.BandHeight)
		out[i] = dir
	}
	return out
}

// variogramFit decodes the model choices. sillGiven says whether
// sill_constraint was given.
func (f *fields) variogramFit(dirs []variogram.Direction) (fp variogram.FitParams, sillGiven bool) {
	fp.NoNugget = !f.boolean("nugget")
	fp.Axes = [3]int{-1, -1, -1}
	if f.need("structures") {
		raw, _ := f.raw("structures")
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			f.p.add(f.name("structures"), "must be a list of structures")
		} else {
			rl := f.rule("structures")
			if len(items) < rl.minItems || len(items) > rl.maxItems {
				f.p.add(f.name("structures"), "must hold 1 to 3 structures (got %d)", len(items))
			}
			for i, item := range items {
				s := newFields(item, fmt.Sprintf("%s[%d]", f.name("structures"), i), f.p, rl.items.obj)
				if len(item) == 0 || string(item) == "null" {
					f.p.add(s.prefix, "is required")
					continue
				}
				name, ok := s.strOK("variogram_type")
				if !ok {
					continue
				}
				t, err := geostat.ParseStructureType(name)
				if err != nil {
					f.p.add(s.name("variogram_type"), "%v", err)
					continue
				}
				spec := variogram.StructureSpec{Type: t}
				if t.HasAlpha() {
					if a := s.integer("alpha"); a != 0 {
						if a%2 == 0 {
							f.p.add(s.name("alpha"), "must be 3, 5, 7 or 9 (got %d)", a)
						}
						spec.Alpha = int(a)
					}
				} else if s.has("alpha") {
					f.p.add(s.name("alpha"), "applies to the spheroidal and generalised Cauchy types only")
				}
				fp.Structures = append(fp.Structures, spec)
			}
		}
	}
	fp.Anisotropy = variogram.AnisotropyIsotropic
	if f.has("anisotropy") {
		a := f.sub("anisotropy")
		switch mode, _ := a.strOK("type"); mode {
		case "isotropic", "":
		case "given", "fitted":
			fp.Anisotropy = variogram.AnisotropyMode(mode)
			given := 0
			for i, name := range []string{"major", "semi_major", "minor"} {
				if !a.has(name) {
					continue
				}
				idx := int(a.integer(name))
				fp.Axes[i] = idx
				given++
				switch {
				case idx >= len(dirs):
					f.p.add(a.name(name), "names direction %d; there are %d directions", idx, len(dirs))
				case dirs[idx].Type == variogram.Omnidirectional:
					f.p.add(a.name(name), "names direction %d, which is omnidirectional", idx)
				}
			}
			if mode == "given" && given < 2 {
				f.p.add(a.name("type"), "given needs two of major, semi_major and minor")
			}
			for i, d := range dirs {
				if d.Type == variogram.Omnidirectional {
					f.p.add(a.name("type"), "%s anisotropy needs directional variograms; directions[%d] is omnidirectional (use isotropic)", mode, i)
					break
				}
			}
		default:
			f.p.add(a.name("type"), "must be isotropic, given or fitted (got %q)", mode)
		}
	}
	if w, ok := f.strOK("weighting"); ok {
		if !slices.Contains(f.rule("weighting").enum, w) {
			f.p.add(f.name("weighting"), "must be cressie, pairs or pairs_over_distance_squared (got %q)", w)
		}
		fp.Weighting = variogram.Weighting(w)
	}
	if s, ok := f.strOK("sill_constraint"); ok {
		if !slices.Contains(f.rule("sill_constraint").enum, s) {
			f.p.add(f.name("sill_constraint"), "must be free, data_variance or unit (got %q)", s)
		}
		fp.Sill, sillGiven = variogram.SillConstraint(s), true
	}
	fp.RangeMin, _ = f.number("range_min")
	fp.RangeMax, _ = f.number("range_max")
	if fp.RangeMin > 0 && fp.RangeMax > 0 && fp.RangeMin >= fp.RangeMax {
		f.p.add(f.name("range_max"), "must exceed range_min (%v ≥ %v)", fp.RangeMin, fp.RangeMax)
	}
	fp.MinPairs = int(f.integer("min_pairs"))
	fp.Starts = int(f.integer("starts"))
	fp.Seed = uint64(f.integer("random_seed"))
	return fp, sillGiven
}

// objectTarget decodes a target object {"reference", "overwrite",
// "description", "tags"}; a null tag is absent, as every null member.
func (f *fields) objectTarget(key string) VariogramModelTarget {
	if !f.need(key) {
		return VariogramModelTarget{}
	}
	t := f.sub(key)
	out := VariogramModelTarget{Reference: t.objectURL("reference"), Overwrite: t.boolean("overwrite"), Description: t.str("description")}
	if t.has("tags") {
		tags := t.sub("tags")
		for k, raw := range tags.m {
			if string(raw) == "null" {
				continue
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				f.p.add(tags.name(k), "must be a string")
				continue
			}
			if out.Tags == nil {
				out.Tags = map[string]string{}
			}
			out.Tags[k] = v
		}
	}
	return out
}

// variogramTarget decodes a target of the variogram-model task: an
// objectTarget whose reference pins no version.
func (f *fields) variogramTarget(key string) VariogramModelTarget {
	out := f.objectTarget(key)
	if out.Reference.Version != "" {
		f.p.add(f.sub(key).name("reference"), "a target cannot pin a version (got version=%s)", out.Reference.Version)
	}
	return out
}

// variogramTargetObject is a target resolved at submit: the object it names when it
// exists.
type variogramTargetObject struct {
	field  string
	t      VariogramModelTarget
	exists bool
	// id and name of the existing object.
	id, name string
}

// variogramObjectStore is what the variogram-model task needs of a store beyond
// ObjectStore: the raw head of an object of any kind, and discarding an
// object it created. StoreAdapter implements it.
type variogramObjectStore interface {
	// ObjectHead returns the id, schema and name of the latest version of the
	// object ref names (ErrNotFound when there is none).
	ObjectHead(ctx context.Context, ref ObjectRef) (id, versionID, schema, name string, err error)
	// DiscardObject soft-deletes an object the task created.
	DiscardObject(ctx context.Context, org, workspace, id string, user store.User) error
}

// DiscardObject soft-deletes an object the variogram-model task created
// (when a later step of the task fails).
func (a *StoreAdapter) DiscardObject(ctx context.Context, org, workspace, id string, user store.User) error {
	return a.Store.DeleteObject(ctx, store.Workspace{Org: org, ID: workspace}, store.Ref{ID: id}, user)
}

// ObjectHead returns the id, version, schema and name of the latest version
// of the object ref names, of any kind (ErrNotFound when there is none).
func (a *StoreAdapter) ObjectHead(ctx context.Context, ref ObjectRef) (id, versionID, schema, name string, err error) {
	v, err := a.Store.GetObject(ctx, store.Workspace{Org: ref.Org, ID: ref.Workspace}, store.Ref{ID: ref.ObjectID, Path: ref.Path})
	if err != nil {
		if store.IsNotFound(err) {
			return "", "", "", "", fmt.Errorf("%s: %w", ref.Raw, ErrNotFound)
		}
		return "", "", "", "", err
	}
	var env struct {
		Name string `json:"name"`
	}
	json.Unmarshal(v.Object, &env)
	return v.ObjectID, v.VersionID, v.Schema, env.Name, nil
}

func variogramStoreOf(env *Env) (variogramObjectStore, error) {
	s := env.Store
	if c, ok := s.(checkedStore); ok { // reads and clean-ups of the store behind a job's role checks
		s = c.ObjectStore
	}
	h, ok := s.(variogramObjectStore)
	if !ok {
		return nil, fmt.Errorf("the object store cannot create objects")
	}
	return h, nil
}

// resolveVariogramTarget checks an object target at submit: the caller may write to
// its workspace, and an existing object is of the kind written and may be
// overwritten; a new object needs a path.
func resolveVariogramTarget(ctx context.Context, env *Env, req Request, field string, t VariogramModelTarget, kind objects.Kind) (*variogramTargetObject, error) {
	ref := t.Reference
	if ref.Org != req.Org {
		return nil, invalid(field, "the object belongs to organisation %s, not %s", ref.Org, req.Org)
	}
	if err := req.Access(ref.Org, ref.Workspace, true); err != nil {
		return nil, err
	}
	h, err := variogramStoreOf(env)
	if err != nil {
		return nil, err
	}
	out := &variogramTargetObject{field: field, t: t}
	id, _, schema, name, err := h.ObjectHead(ctx, ref)
	switch {
	case errors.Is(err, ErrNotFound):
		if ref.Path == "" {
			return nil, invalid(field, "no object with id %s; a new object is created at a path URL (…/objects/path/<path>)", ref.ObjectID)
		}
		return out, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if !t.Overwrite {
		return nil, invalid(field, "the object %s exists; set overwrite to true to write a new version of it", ref.Raw)
	}
	if sid, err := objects.ParseSchemaID(schema); err != nil || sid.Kind != kind {
		return nil, invalid(field, "the object %s is a %s object; a %s object cannot replace it", ref.Raw, schema, kind)
	}
	out.exists, out.id, out.name = true, id, name
	return out, nil
}

// objectName is the name of a new object: its path's last element without
// its extension.
func (t *variogramTargetObject) objectName() string {
	if t.exists && t.name != "" {
		return t.name
	}
	base := path.Base(t.t.Reference.Path)
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// envelope starts the document of the target's object.
func (t *variogramTargetObject) envelope(schema objects.SchemaID, description string) map[string]any {
	doc := map[string]any{"schema": schema.String(), "uuid": nil, "name": t.objectName()}
	if t.t.Description != "" {
		description = t.t.Description
	}
	doc["description"] = description
	if len(t.t.Tags) > 0 {
		doc["tags"] = t.t.Tags
	}
	return doc
}

// write stores doc as the target's object: created at its path, or as a new
// version of the latest version of the existing object. It returns the
// object's id and the new version's id.
func (t *variogramTargetObject) write(ctx context.Context, env *Env, user store.User, doc map[string]any) (string, string, error) {
	data, err := objects.EncodeJSON(doc)
	if err != nil {
		return "", "", err
	}
	h, err := variogramStoreOf(env)
	if err != nil {
		return "", "", err
	}
	ref := t.t.Reference
	if !t.exists {
		id, vid, err := env.Store.CreateObject(ctx, ref.Org, ref.Workspace, ref.Path, data, user)
		if err != nil {
			return "", "", t.named(fmt.Errorf("%s: creating %s: %w", t.field, ref.Raw, err))
		}
		return id, vid, nil
	}
	for attempt := 0; attempt < 8; attempt++ {
		id, latest, _, _, err := h.ObjectHead(ctx, ObjectRef{Raw: ref.Raw, Org: ref.Org, Workspace: ref.Workspace, ObjectID: t.id})
		if err != nil {
			return "", "", fmt.Errorf("%s: reading %s: %w", t.field, ref.Raw, err)
		}
		vid, err := env.Store.PutVersion(ctx, ref.Org, ref.Workspace, id, latest, data, user)
		if errors.Is(err, ErrStale) {
			continue
		}
		if err != nil {
			return "", "", t.named(fmt.Errorf("%s: writing %s: %w", t.field, ref.Raw, err))
		}
		return id, vid, nil
	}
	return "", "", fmt.Errorf("%s: the object kept changing while the result was written; submit the task again", t.field)
}

// named keeps the problem document of a store error (an object created at
// the path meanwhile is 409) with the target's member added to its detail
// and as its field.
func (t *variogramTargetObject) named(err error) error {
	var c problem.Carrier
	if !errors.As(err, &c) {
		return err
	}
	p := c.Problem()
	extra := map[string]any{"field": t.field}
	for k, v := range p.Extra {
		extra[k] = v
	}
	return &problem.Error{Status: p.Status, Type: p.Type, Title: p.Title, Detail: t.field + ": " + p.Detail, Extra: extra, Err: err}
}

type variogramModelPlan struct {
	env          *Env
	req          Request
	p            *VariogramModelParams
	source       *Version
	attr         *objects.Attribute
	weights      *objects.Attribute
	distribution *geostat.Distribution
	exp, vario   *variogramTargetObject
}

// PrepareVariogramModel validates a variogram-model request and loads what
// it reads.
func PrepareVariogramModel(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeVariogramModel(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &variogramModelPlan{env: env, req: req, p: p}
	if pl.source, err = loadObject(ctx, env, req.Access, req.Org, "source", p.Source.Object, false); err != nil {
		return nil, err
	}
	if err := requireKind("source", pl.source, pointKinds...); err != nil {
		return nil, err
	}
	if pl.attr, err = continuousAttribute("source.attribute", pl.source, p.Source.Attribute); err != nil {
		return nil, err
	}
	if p.Weights != "" {
		if pl.weights, err = continuousAttribute("source.weights", pl.source, p.Weights); err != nil {
			return nil, err
		}
		if pl.weights.List != pl.attr.List {
			return nil, invalid("source.weights", "the weights are on %s, the values on %s: both must be attributes of the same locations", pl.weights.List, pl.attr.List)
		}
	}
	if p.Distribution != nil {
		if pl.distribution, err = loadDistribution(ctx, env, req, "distribution", *p.Distribution); err != nil {
			return nil, err
		}
	}
	if !p.SillGiven {
		p.Fit.Sill = variogram.SillFree
		if pl.distribution != nil {
			p.Fit.Sill = variogram.SillUnit
		}
	}
	if pl.exp, err = resolveVariogramTarget(ctx, env, req, "target.experimental_variogram.reference", p.Experimental, experimentalVariogramSchema.Kind); err != nil {
		return nil, err
	}
	if pl.vario, err = resolveVariogramTarget(ctx, env, req, "target.variogram.reference", p.Variogram, fittedVariogramSchema.Kind); err != nil {
		return nil, err
	}
	if pl.exp.exists && pl.vario.exists && pl.exp.id == pl.vario.id {
		return nil, invalid("target.variogram.reference", "names the same object as target.experimental_variogram.reference")
	}
	n, _ := pl.source.Object.ExpectedLength(pl.attr.List)
	// Memory: coordinates, values, weights and the library's sorted copies
	// and cell indexes (about 12 float64 per sample). Disk: two small tables.
	lags := float64(len(p.Compute.Directions) * (p.Compute.NLags + 1))
	if err := env.admit(req, "source", float64(n)*8*12+lags*64, lags*48+1<<16); err != nil {
		return nil, err
	}
	return pl, nil
}

// libraryParam maps the member a library error starts with onto the request
// member, or "" when the error names none.
func libraryParam(err error) (string, string) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "experimental variogram: ")
	msg = strings.TrimPrefix(msg, "variogram fit: ")
	name, reason, ok := strings.Cut(msg, ": ")
	if !ok {
		return "", ""
	}
	prefixes := []struct{ lib, req string }{
		{"directions", "directions"},
		{"lag_distance", "lags.lag_distance"},
		{"n_lags", "lags.number_of_lags"},
		{"lag_tolerance", "lags.lag_tolerance"},
		{"structures", "model.structures"},
		{"anisotropy", "model.anisotropy"},
		{"axes.", "model.anisotropy."},
		{"axes", "model.anisotropy"},
		{"weighting", "model.weighting"},
		{"min_pairs", "model.min_pairs"},
		{"data_variance", "model.sill_constraint"},
		{"sill", "model.sill_constraint"},
		{"range_min, range_max", "model.range_min"},
		{"starts", "model.starts"},
		{"series", "directions"},
	}
	for _, p := range prefixes {
		if strings.HasPrefix(name, p.lib) {
			return p.req + strings.TrimPrefix(name, p.lib), reason
		}
	}
	return "", ""
}

// libraryError turns an error of the variogram library into the task's
// error: a parameter it names becomes an invalid parameter (422), data it
// cannot use an invalid-data problem naming the source.
func (pl *variogramModelPlan) libraryError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if name, reason := libraryParam(err); name != "" {
		return &ValidationError{Params: []InvalidParam{{Name: name, Reason: reason}}}
	}
	msg := strings.TrimPrefix(err.Error(), "experimental variogram: ")
	for _, prefix := range []string{"values", "weights", "coordinates"} {
		if strings.HasPrefix(msg, prefix) {
			field := "source.attribute"
			if prefix == "weights" {
				field = "source.weights"
			}
			return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
				Detail: fmt.Sprintf("%s: the samples of %s cannot be used: %s", field, pl.p.Source.Object.Raw, msg),
				Extra:  map[string]any{"field": field, "object": pl.p.Source.Object.Raw, "member": pl.attr.Name}}
		}
	}
	return err
}

func (pl *variogramModelPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	progress(2, "reading the source")
	coords, err := pl.source.Object.ListLocations(ctx, pl.source.Blobs, pl.attr.List)
	if err != nil {
		return nil, dataOf("source", pl.source, err)
	}
	values, err := readColumn(ctx, pl.source, pl.attr)
	if err != nil {
		return nil, dataOf("source", pl.source, err)
	}
	keep, err := applyFilter(ctx, "source.filter", pl.source, p.Source.Filter, len(values))
	if err != nil {
		return nil, err
	}
	maskOut(values, keep)
	var weights []float64
	if pl.weights != nil {
		if weights, err = readColumn(ctx, pl.source, pl.weights); err != nil {
			return nil, dataOf("source", pl.source, err)
		}
		// A sample without a (finite) weight is left out; a left-out
		// sample's weight does not matter.
		for i, w := range weights {
			if math.IsNaN(w) || math.IsInf(w, 0) {
				values[i] = math.NaN()
			}
			if math.IsNaN(values[i]) {
				weights[i] = 0
			}
		}
	}
	for i, v := range values {
		if math.IsInf(v, 0) {
			values[i] = math.NaN()
		}
	}
	if pl.distribution != nil {
		progress(5, "normal scores")
		for i, v := range values {
			if !math.IsNaN(v) {
				values[i] = pl.distribution.NormalScore(v)
			}
		}
	}
	progress(8, "experimental variograms")
	cp := p.Compute
	cp.Progress = scaleProgress(progress, 8, 70, "experimental variograms")
	exp, err := variogram.Compute(ctx, coords, values, weights, cp)
	if err != nil {
		return nil, pl.libraryError(err)
	}
	progress(72, "fitting the model")
	fp := p.Fit
	fp.DataVariance = exp.DataVariance
	fit, err := variogram.Fit(ctx, exp.Series(), fp)
	if err != nil {
		return nil, pl.libraryError(err)
	}
	progress(88, "writing the objects")
	ws := p.Experimental.Reference
	expDoc, err := pl.experimentalDoc(ctx, exp, ws.Org, ws.Workspace)
	if err != nil {
		return nil, err
	}
	varDoc := pl.variogramDoc(fit.Variogram)
	expID, expVer, err := pl.exp.write(ctx, pl.env, pl.req.User, expDoc)
	if err != nil {
		return nil, err
	}
	varID, varVer, err := pl.vario.write(ctx, pl.env, pl.req.User, varDoc)
	if err != nil {
		// A failed task leaves no object behind: the experimental variogram
		// this run created is deleted again (a new version of an existing
		// object cannot be taken back).
		if !pl.exp.exists {
			if h, herr := variogramStoreOf(pl.env); herr == nil {
				if derr := h.DiscardObject(context.WithoutCancel(ctx), ws.Org, ws.Workspace, expID, pl.req.User); derr != nil {
					pl.env.Logger.Warn("variogram-model: deleting the experimental variogram after a failure", "object", expID, "error", derr)
				}
			}
		}
		return nil, err
	}
	warnings := append([]string{}, fit.Warnings...)
	return map[string]any{
		"message":                "Variogram model completed successfully.",
		"experimental_variogram": pl.env.variogramObjectResult(p.Experimental.Reference, expID, expVer, expDoc),
		"variogram":              pl.env.variogramObjectResult(p.Variogram.Reference, varID, varVer, varDoc),
		"samples":                exp.Samples,
		"data_variance":          exp.DataVariance,
		"fit": map[string]any{
			"residual":   fit.Residual,
			"lags":       fit.Lags,
			"parameters": fit.Parameters,
			"nugget":     fit.Variogram.Nugget,
			"sill":       fit.Variogram.TotalSill(),
			"structures": varDoc["structures"],
			"warnings":   warnings,
		},
	}, nil
}

// createdResult is {reference, object_id, version_id, name, description,
// schema_id} of an object the task wrote.
func (env *Env) variogramObjectResult(ref ObjectRef, id, version string, doc map[string]any) map[string]any {
	r := map[string]any{
		"reference":   env.objectURL(ref.Org, ref.Workspace, id, version),
		"object_id":   id,
		"version_id":  version,
		"name":        doc["name"],
		"description": doc["description"],
		"schema_id":   doc["schema"],
	}
	if ref.Path != "" {
		r["path"] = ref.Path
	}
	return r
}

// experimentalDoc writes the tables of exp as Parquet blobs and returns the
// experimental-variogram document: the directions table (offset, count,
// direction_type, azimuth, dip, azimuth_tolerance, dip_tolerance,
// bandwidth, bandheight; +Inf for no band limit) and the lags table (start,
// end, centroid, value, num_pairs; NaN centroid and value for a lag without
// pairs), with a lag attribute "weights" (the sum of the pair weights) when
// the samples have declustering weights.
func (pl *variogramModelPlan) experimentalDoc(ctx context.Context, exp *variogram.Experimental, org, ws string) (map[string]any, error) {
	nd, nl := len(exp.Directions), len(exp.Lags)
	dcols := []objects.Column{
		{Type: objects.TypeUint64, Uint64: make([]uint64, nd)}, {Type: objects.TypeUint64, Uint64: make([]uint64, nd)},
		{Type: objects.TypeString, String: make([]string, nd)},
	}
	for range 6 {
		dcols = append(dcols, objects.Column{Type: objects.TypeFloat64, Float64: make([]float64, nd)})
	}
	for i, d := range exp.Directions {
		dcols[0].Uint64[i], dcols[1].Uint64[i], dcols[2].String[i] = uint64(d.Offset), uint64(d.Count), string(d.Type)
		for c, v := range []float64{d.Azimuth, d.Dip, d.AzimuthTolerance, d.DipTolerance, d.Bandwidth, d.BandHeight} {
			dcols[3+c].Float64[i] = v
		}
	}
	dkey, err := storeColumns(ctx, pl.env, org, ws, dcols, []string{"offset", "count", "direction_type", "azimuth", "dip", "azimuth_tolerance", "dip_tolerance", "bandwidth", "bandheight"})
	if err != nil {
		return nil, err
	}
	lcols := []objects.Column{}
	for range 4 {
		lcols = append(lcols, objects.Column{Type: objects.TypeFloat64, Float64: make([]float64, nl)})
	}
	lcols = append(lcols, objects.Column{Type: objects.TypeUint64, Uint64: make([]uint64, nl)})
	weights := make([]float64, nl)
	for i, l := range exp.Lags {
		lcols[0].Float64[i], lcols[1].Float64[i], lcols[2].Float64[i], lcols[3].Float64[i] = l.Start, l.End, l.Centroid, l.Value
		lcols[4].Uint64[i] = l.Pairs
		weights[i] = l.Weight
	}
	lkey, err := storeColumns(ctx, pl.env, org, ws, lcols, []string{"start", "end", "centroid", "value", "num_pairs"})
	if err != nil {
		return nil, err
	}
	doc := pl.exp.envelope(experimentalVariogramSchema, fmt.Sprintf("Experimental variograms of %s", pl.attrLabel()))
	doc["attribute"] = pl.attr.Name
	doc["data_variance"] = exp.DataVariance
	doc["variogram_type"] = "variogram"
	doc["directions"] = map[string]any{"data": dkey, "length": nd, "width": 9,
		"data_type": "uint64/uint64/string/float64/float64/float64/float64/float64/float64"}
	lags := map[string]any{"data": lkey, "length": nl, "width": 5, "data_type": "float64/float64/float64/float64/uint64"}
	if pl.weights != nil {
		wkey, err := storeFloat64(ctx, pl.env, org, ws, [][]float64{weights}, []string{"weights"})
		if err != nil {
			return nil, err
		}
		lags["attributes"] = []any{map[string]any{
			"name": "weights", "key": uuid.NewString(), "attribute_type": objects.AttributeScalar,
			"nan_description": map[string]any{"values": []any{}},
			"values":          objects.Element{Data: wkey, Length: int64(nl), Width: 1, DataType: objects.TypeFloat64}.JSON(),
		}}
	}
	doc["lags"] = lags
	return doc, nil
}

// attrLabel names the modelled values in descriptions.
func (pl *variogramModelPlan) attrLabel() string {
	if pl.distribution != nil {
		return "the normal scores of " + pl.attr.Name
	}
	return pl.attr.Name
}

// variogramDoc returns the fitted variogram's document (schema 1.2.0): all
// structures share one rotation (is_rotation_fixed), modelling_space is
// normalscore when the values went through a distribution.
func (pl *variogramModelPlan) variogramDoc(v *geostat.Variogram) map[string]any {
	doc := pl.vario.envelope(fittedVariogramSchema, fmt.Sprintf("Variogram model fitted to the experimental variograms of %s", pl.attrLabel()))
	structs := geostat.EncodeStructures(v)
	doc["nugget"] = v.Nugget
	doc["sill"] = v.TotalSill()
	if v.DataVariance > 0 {
		doc["data_variance"] = v.DataVariance
	}
	doc["is_rotation_fixed"] = true
	doc["modelling_space"] = "data"
	if pl.distribution != nil {
		doc["modelling_space"] = "normalscore"
	}
	doc["attribute"] = pl.attr.Name
	doc["structures"] = structs
	return doc
}
