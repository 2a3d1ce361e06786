package tasks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path"
	"strings"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
)

// DistributionSchemaVersion is the schema version of the distribution
// objects continuous-distribution writes.
const DistributionSchemaVersion = "1.2.0"

// DistributionParams are the parameters of the continuous-distribution task.
type DistributionParams struct {
	Source  Source
	Weights *Source
	// Lower and Upper are the tails in the object's terms (the zero Tail:
	// no extrapolation); the lower power is stored as 1/power
	// (geostat.LowerPowerTail).
	Lower, Upper geostat.Tail
	Target       ObjectRef
	Overwrite    bool
	Description  string
	Tags         map[string]string
}

// distributionRules declares the members of a continuous-distribution
// request.
func distributionRules(source *object) *object {
	tail := func(ref, bound, doc, powerDoc string) *object {
		return &object{ref: ref, doc: doc, fields: []*rule{
			number("power", powerDoc).between(0, 1).positive().req(),
			number(bound, "The bound of the tail: "+map[string]string{
				"min": "strictly below the smallest data value",
				"max": "strictly above the largest data value"}[bound]).req(),
		}}
	}
	tails := &object{ref: "TailExtrapolation", doc: "Power-model tails beyond the data (docs/math.md, section 5)", fields: []*rule{
		member("upper", tail("UpperTail", "max", "The upper power-model tail",
			"The exponent ω in (0, 1] of F(z) = pₙ + (1 − pₙ)((z − zₙ)/(max − zₙ))^ω, stored as it is"), "The upper tail").req(),
		member("lower", tail("LowerTail", "min", "The lower power-model tail",
			"The denominator ω in (0, 1] of the exponent: F(z) = p₁((z − min)/(z₁ − min))^(1/ω); the object stores 1/ω (its schema asks ≥ 1)"),
			"The lower tail (none: no extrapolation below the data)"),
	}}
	target := &object{ref: "DistributionTarget", doc: "The distribution object to write", fields: []*rule{
		objectRef("reference", "The object's URL: a path URL creates the object when it does not exist"),
		boolean("overwrite", false, "Write a new version when an object exists at the reference (false: the task is refused)"),
		str("description", "The object's description"),
		member("tags", &object{doc: "Key-value pairs of user-defined metadata", values: str("", "")}, "The object's tags"),
	}}
	return &object{doc: "Non-parametric continuous distribution of an attribute: sorted values, weights normalised to 1, mid-step probabilities. Missing values are skipped; values of weight 0 are left out; negative, missing or infinite weights, or none positive, are 422 naming weights; the lower tail power ω is stored as 1/ω (the schema asks ≥ 1), the upper as it is; max/min must be strictly beyond the data (docs/api.md 8.3)", fields: []*rule{
		member("source", source, "The values (a continuous attribute of a point set or downhole intervals)").req(),
		member("weights", source, "One weight per value, e.g. declustering weights: finite and ≥ 0; a value of weight 0 is left out"),
		member("tail_extrapolation", tails, "Power-model tails (none: no extrapolation on either side)"),
		member("target", target, "The distribution object to create, or to write a new version of").req(),
	}}
}

// DecodeDistribution decodes and checks the fields of a
// continuous-distribution request.
func DecodeDistribution(raw []byte) (*DistributionParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "continuous-distribution"), &p)
	out := &DistributionParams{}
	out.Source = f.currentSource("source")
	if f.has("weights") {
		w := f.currentSource("weights")
		out.Weights = &w
	}
	if f.has("tail_extrapolation") {
		t := f.sub("tail_extrapolation")
		if t.need("upper") {
			u := t.sub("upper")
			power, okp := u.number("power")
			bound, okb := u.number("max")
			if okp && okb {
				var err error
				if out.Upper, err = geostat.UpperPowerTail(bound, power); err != nil {
					p.add(u.name("power"), "%v", err)
				}
			}
		}
		if t.has("lower") {
			l := t.sub("lower")
			power, okp := l.number("power")
			bound, okb := l.number("min")
			if okp && okb {
				var err error
				if out.Lower, err = geostat.LowerPowerTail(bound, power); err != nil {
					p.add(l.name("power"), "%v", err)
				}
			}
		}
	}
	t := f.objectTarget("target")
	out.Target, out.Overwrite, out.Description, out.Tags = t.Reference, t.Overwrite, t.Description, t.Tags
	return out, p.err()
}

type distributionPlan struct {
	env                     *Env
	req                     Request
	p                       *DistributionParams
	source, weights         *Version
	sourceAttr, weightsAttr *objects.Attribute
	// srcBM is set when the source is a block model (sourceAttr nil).
	srcBM *bmEnd
	// existing is the object at the target reference (nil: created).
	existing *Version
}

// PrepareDistribution validates a continuous-distribution request: the
// source (and weights) attributes on point sets or downhole intervals, one
// weight per value, and the target reference: an existing object is
// refused unless overwrite is true (then it must be a distribution object),
// and a new object needs a path URL.
//
// The table is geostat.BuildDistribution's (docs/math.md section 5): the
// values sorted, the weights normalised to sum 1, mid-step cumulative
// probabilities. Decisions (docs/api.md): a missing value is skipped with its
// weight; a value of weight exactly 0 carries no probability mass and is
// left out (the result message counts them), so that the weights of the
// declustering task, which gives 0 to samples no evaluation location
// reaches, can be used as they are; a negative, NaN or infinite weight of a
// value, or no value of positive weight, fails the job with 422 naming
// weights. The lower tail's power ω ∈ (0, 1] is stored as 1/ω (the
// object's schema requires a lower power ≥ 1; ω is the denominator of the
// exponent); the upper power is stored as it is. is_declustered is true
// when weights are given, support is "point", the bounding box and the
// coordinate reference system are the source object's.
func PrepareDistribution(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeDistribution(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &distributionPlan{env: env, req: req, p: p}
	if pl.source, err = loadObject(ctx, env, req.Access, req.Org, "source", p.Source.Object, false); err != nil {
		return nil, err
	}
	if err := requireKind("source", pl.source, estimateSourceKinds...); err != nil {
		return nil, err
	}
	var n int64
	if pl.source.BlockModel != nil {
		if pl.srcBM, err = openBlockModel(ctx, env, "source", pl.source, p.Source.Object, false); err != nil {
			return nil, err
		}
		if err := pl.srcBM.sourceColumn("source.attribute", p.Source.Attribute); err != nil {
			return nil, err
		}
		n = pl.srcBM.rows()
	} else {
		if pl.sourceAttr, err = continuousAttribute("source.attribute", pl.source, p.Source.Attribute); err != nil {
			return nil, err
		}
		if n, err = pl.source.Object.ExpectedLength(pl.sourceAttr.List); err != nil {
			return nil, dataOf("source", pl.source, err)
		}
	}
	if p.Weights != nil {
		if pl.weights, err = loadObject(ctx, env, req.Access, req.Org, "weights", p.Weights.Object, false); err != nil {
			return nil, err
		}
		if err := requireKind("weights", pl.weights, pointKinds...); err != nil {
			return nil, err
		}
		if pl.weightsAttr, err = continuousAttribute("weights.attribute", pl.weights, p.Weights.Attribute); err != nil {
			return nil, err
		}
		nw, err := pl.weights.Object.ExpectedLength(pl.weightsAttr.List)
		if err != nil {
			return nil, dataOf("weights", pl.weights, err)
		}
		if nw != n {
			return nil, invalid("weights.attribute", "%d weights for %d values: one weight per value is needed", nw, n)
		}
	}
	t := p.Target
	if t.Org != req.Org {
		return nil, invalid("target.reference", "the object belongs to organisation %s, not %s", t.Org, req.Org)
	}
	if err := req.Access(t.Org, t.Workspace, true); err != nil {
		return nil, err
	}
	// A pinned version (the client pins the version of an object it has
	// loaded) does not matter: a new version is written on top of the
	// latest one, as every task writes its target.
	latest := t
	latest.Version = ""
	v, err := env.Store.Get(ctx, latest)
	switch {
	case errors.Is(err, ErrNotFound):
		if t.Path == "" {
			return nil, invalid("target.reference", "no object with id %s: a new object needs a path URL (…/objects/path/<path>)", t.ObjectID)
		}
	case err != nil:
		return nil, objectData("target.reference", t.Raw, err)
	case !p.Overwrite:
		return nil, invalid("target.overwrite", "an object exists at %s: set overwrite to true to write a new version of it", t.Raw)
	default:
		if err := requireKind("target.reference", v, objects.KindDistribution); err != nil {
			return nil, err
		}
		pl.existing = v
	}
	// Memory: values, weights, the sorted table and its Parquet copy; disk:
	// the two table columns.
	if err := env.admit(req, "source", float64(n)*8*8, float64(n)*16); err != nil {
		return nil, err
	}
	return pl, nil
}

// weightsData is a 422 about the weights' data.
func weightsData(v *Version, a *objects.Attribute, format string, args ...any) error {
	return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
		Detail: fmt.Sprintf("weights: attribute %q of %s: %s", a.Name, v.Path, fmt.Sprintf(format, args...)),
		Extra:  map[string]any{"field": "weights", "object": v.Path, "member": a.Name}}
}

func (pl *distributionPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	progress(2, "reading the values")
	var values []float64
	var err error
	if pl.srcBM != nil {
		values, err = pl.srcBM.readFloat64(ctx, "source.attribute", pl.srcBM.title)
	} else if values, err = readColumn(ctx, pl.source, pl.sourceAttr); err != nil {
		err = dataOf("source", pl.source, err)
	}
	if err != nil {
		return nil, err
	}
	var weights []float64
	dropped := 0
	if pl.weights != nil {
		w, err := readColumn(ctx, pl.weights, pl.weightsAttr)
		if err != nil {
			return nil, dataOf("weights", pl.weights, err)
		}
		// Values of weight 0 carry no mass: they are left out. Other
		// weights of values must be finite and positive.
		kept, positive := 0, 0
		for i, z := range values {
			if math.IsNaN(z) {
				continue
			}
			switch x := w[i]; {
			case math.IsNaN(x):
				return nil, weightsData(pl.weights, pl.weightsAttr, "the weight of value %d is missing: every value needs a finite weight ≥ 0", i)
			case x < 0 || math.IsInf(x, 0):
				return nil, weightsData(pl.weights, pl.weightsAttr, "weight %d is %v: weights must be finite and ≥ 0", i, x)
			case x == 0:
				dropped++
				continue
			}
			positive++
			values[kept], w[kept] = z, w[i]
			kept++
		}
		if positive == 0 {
			return nil, weightsData(pl.weights, pl.weightsAttr, "no value has a positive weight (%d values of weight 0)", dropped)
		}
		values, weights = values[:kept], w[:kept]
	}
	progress(30, "building the distribution")
	d, err := geostat.BuildDistribution(values, weights, p.Lower, p.Upper)
	if err != nil {
		return nil, pl.buildError(err)
	}
	z, pr := make([]float64, d.Len()), make([]float64, d.Len())
	for j := range z {
		z[j], pr[j] = d.Node(j)
	}
	progress(60, "writing the distribution")
	t := p.Target
	key, err := storeFloat64(ctx, pl.env, t.Org, t.Workspace, [][]float64{z, pr}, []string{"value", "probability"})
	if err != nil {
		return nil, err
	}
	lower, upper := d.Tails()
	doc := pl.document(key, len(z), lower, upper)
	id, vid, obj, err := pl.write(ctx, doc)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Continuous distribution completed successfully: %d values", len(z))
	if pl.weights != nil {
		msg += fmt.Sprintf(", weighted (%d values of weight 0 left out)", dropped)
	}
	r := map[string]any{
		"reference":   pl.env.objectURL(t.Org, t.Workspace, id, vid),
		"name":        obj.Name,
		"description": nil,
		"schema_id":   obj.Schema.String(),
	}
	if s, ok := obj.Doc()["description"].(string); ok {
		r["description"] = s
	}
	return map[string]any{"message": msg + ".", "distribution": r}, nil
}

// buildError names the request member a BuildDistribution error is about.
func (pl *distributionPlan) buildError(err error) error {
	msg := err.Error()
	field := "source"
	for _, f := range []string{"tail_extrapolation.lower.min", "tail_extrapolation.upper.max", "weights"} {
		if strings.HasPrefix(msg, f) {
			field = f
		}
	}
	obj, attr := pl.source.Path, pl.sourceName()
	return &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
		Detail: fmt.Sprintf("%s: the data of %s (attribute %q) cannot make the distribution: %v", field, obj, attr, err),
		Extra:  map[string]any{"field": field, "object": obj, "member": attr}}
}

// document is the distribution object's JSON.
// sourceName is the name of the source attribute (or block model column).
func (pl *distributionPlan) sourceName() string {
	if pl.srcBM != nil {
		return pl.srcBM.title
	}
	return pl.sourceAttr.Name
}

func (pl *distributionPlan) document(key string, rows int, lower, upper geostat.Tail) map[string]any {
	src := pl.source.Object.Doc()
	var desc any
	if pl.srcBM != nil {
		src = pl.source.BlockModel.Doc
		desc = blockModelAttributeDescription(src, pl.srcBM.title)
	} else {
		desc = attributeDescription(src, pl.sourceAttr)
	}
	name := strings.TrimSuffix(path.Base(pl.p.Target.Path), ".json")
	var id any
	if pl.existing != nil {
		name, id = pl.existing.Object.Name, pl.existing.ObjectID
	}
	doc := map[string]any{
		"schema": objects.SchemaID{Kind: objects.KindDistribution, Version: DistributionSchemaVersion}.String(),
		"name":   name,
		"uuid":   id,
		"cdf": map[string]any{
			"values":                   map[string]any{"data": key, "length": rows, "width": 2, "data_type": "float64"},
			"lower_tail_extrapolation": geostat.EncodeTail(lower, false),
			"upper_tail_extrapolation": geostat.EncodeTail(upper, true),
		},
		"is_declustered":              pl.weights != nil,
		"support":                     "point",
		"bounding_box":                src["bounding_box"],
		"coordinate_reference_system": src["coordinate_reference_system"],
	}
	if pl.p.Description != "" {
		doc["description"] = pl.p.Description
	} else if pl.existing != nil {
		if d, ok := pl.existing.Object.Doc()["description"]; ok {
			doc["description"] = d
		}
	}
	if len(pl.p.Tags) > 0 {
		doc["tags"] = pl.p.Tags
	}
	if desc != nil {
		doc["attribute_description"] = desc
	}
	return doc
}

// attributeDescription returns the attribute_description member of an
// attribute of a document (nil when it has none).
func attributeDescription(doc map[string]any, a *objects.Attribute) any {
	var cur any = doc
	for _, part := range strings.Split(a.List, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	list, ok := cur.([]any)
	if !ok || a.Index < 0 || a.Index >= len(list) {
		return nil
	}
	m, ok := list[a.Index].(map[string]any)
	if !ok {
		return nil
	}
	return m["attribute_description"]
}

// write stores the document: a new object at the target path, or a new
// version of the existing object (of its latest version, retried when
// another writer got there first).
func (pl *distributionPlan) write(ctx context.Context, doc map[string]any) (id, vid string, obj *objects.Object, err error) {
	t := pl.p.Target
	data, err := objects.EncodeJSON(doc)
	if err != nil {
		return "", "", nil, err
	}
	if obj, err = objects.Decode(data); err != nil {
		return "", "", nil, fmt.Errorf("the distribution object: %w", err)
	}
	if pl.existing == nil {
		id, vid, err = pl.env.Store.CreateObject(ctx, t.Org, t.Workspace, t.Path, data, pl.req.User)
		if errors.Is(err, ErrExists) {
			return "", "", nil, &problem.Error{Status: http.StatusConflict, Type: problem.ObjectAlreadyExists, Title: "Geoscience Object Already Exists.",
				Detail: fmt.Sprintf("target.reference: an object was created at %s while the task ran; submit again with overwrite true to replace it", t.Raw),
				Extra:  map[string]any{"field": "target.reference"}, Err: err}
		}
		return id, vid, obj, err
	}
	ref := ObjectRef{Org: t.Org, Workspace: t.Workspace, ObjectID: pl.existing.ObjectID}
	for attempt := 0; attempt < 8; attempt++ {
		latest, err := pl.env.Store.Get(ctx, ref)
		if err != nil {
			return "", "", nil, fmt.Errorf("reading the target: %w", err)
		}
		vid, err = pl.env.Store.PutVersion(ctx, t.Org, t.Workspace, latest.ObjectID, latest.VersionID, data, pl.req.User)
		if errors.Is(err, ErrStale) {
			continue
		}
		return latest.ObjectID, vid, obj, err
	}
	return "", "", nil, fmt.Errorf("the target object kept changing while the distribution was written; submit the task again")
}
