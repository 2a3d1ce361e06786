package tasks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/objects"
)

// locationWiseRules declares the members of the location-wise task: an
// ensemble attribute of a grid, a grid target (no attribute: the task names
// its outputs) and the operations.
func locationWiseRules(source *object) *object {
	target := &object{ref: "LocationWiseTarget", doc: "The grid the statistics are written to (the source's grid or one with as many cells)",
		fields: []*rule{
			objectRef("object", "The grid's URL"),
			absent("attribute", "location-wise names its outputs (min, max, mean, variance, Quantile: q, Prob>c, Mean>c); the target takes no attribute"),
		}}
	cutoffs := func(what string) *object {
		list := array("cutoffs", number("", "A cutoff c").req(), "The cutoffs, at least one, each once; "+what+" counts the values strictly greater than c").req()
		list.minItems = 1
		return &object{fields: []*rule{list}}
	}
	return &object{doc: "Per-cell statistics over the realisations of an ensemble attribute of a grid: at least one of summary, quantiles, " +
		"probability_above_cutoff and mean_above_cutoff; each output is written as an attribute of the target (docs/api.md)", fields: []*rule{
		member("source", source, "The grid and its ensemble attribute (a continuous attribute is an ensemble of one realisation)").req(),
		member("target", target, "The grid the outputs are written to").req(),
		boolean("summary", false, "Write min, max, mean and variance (divisor n)"),
		array("quantiles", number("", "A quantile level in [0, 1]").between(0, 1).req(),
			"Quantile levels, each once, written as \"Quantile: q\" (linear interpolation at q·(n − 1))"),
		member("probability_above_cutoff", cutoffs("P(X > c)"), "Write P(X > c) for each cutoff as \"Prob>c\""),
		member("mean_above_cutoff", cutoffs("E[X | X > c]"), "Write E[X | X > c] for each cutoff as \"Mean>c\""),
	}}
}

// LocationWiseParams are the parameters of the location-wise task.
type LocationWiseParams struct {
	Source Source
	// Target is the grid written to; it has no attribute.
	Target     ObjectRef
	Operations ensemble.Operations
}

// numbers decodes a list of numbers whose items must not be null, naming an
// invalid item by its index; ok is false when the member is absent or
// invalid.
func (f *fields) numbers(key string) ([]float64, bool) {
	var items []*float64
	if !f.unmarshal(key, &items) {
		return nil, false
	}
	rl := f.rule(key)
	if len(items) < rl.minItems {
		f.p.add(f.name(key), "needs at least %d item(s)", rl.minItems)
		return nil, false
	}
	out := make([]float64, len(items))
	ok := true
	for i, v := range items {
		if v == nil {
			f.p.add(fmt.Sprintf("%s[%d]", f.name(key), i), "must be a number, not null")
			ok = false
			continue
		}
		out[i] = *v
	}
	return out, ok
}

// fieldProblem records a library validation error (*ensemble.FieldError)
// under the request's member names; it reports whether err was one.
func (f *fields) fieldProblem(err error) bool {
	var fe *ensemble.FieldError
	if !errors.As(err, &fe) {
		return false
	}
	name := fe.Name
	if f.prefix != "" && name != "" {
		name = f.prefix + "." + name
	}
	f.p.add(name, "%s", fe.Reason)
	return true
}

// DecodeLocationWise decodes and checks a location-wise request (current
// shape only). At least one operation is required: without one, every
// operation member is reported.
func DecodeLocationWise(raw []byte) (*LocationWiseParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "location-wise"), &p)
	out := &LocationWiseParams{Source: f.currentSource("source")}
	if f.need("target") {
		t := f.sub("target")
		out.Target = t.objectURL("object")
		t.reject("attribute")
	}
	ops := &out.Operations
	before := len(p.list)
	ops.Summary = f.boolean("summary")
	ops.Quantiles, _ = f.numbers("quantiles")
	for _, key := range []string{"probability_above_cutoff", "mean_above_cutoff"} {
		if !f.has(key) {
			continue
		}
		c := f.sub(key)
		if !c.need("cutoffs") {
			continue
		}
		v, _ := c.numbers("cutoffs")
		if key == "probability_above_cutoff" {
			ops.ProbabilityAbove = v
		} else {
			ops.MeanAbove = v
		}
	}
	// The library's checks (levels in [0, 1], no repeated value, at least
	// one operation) once the members decode.
	if len(p.list) == before {
		if err := ops.Validate(); err != nil {
			var fe *ensemble.FieldError
			if errors.As(err, &fe) && fe.Name == "" {
				for _, m := range []string{"summary", "quantiles", "probability_above_cutoff", "mean_above_cutoff"} {
					p.add(f.name(m), "no operation requested: give at least one of summary (true), quantiles, probability_above_cutoff or mean_above_cutoff")
				}
			} else if !f.fieldProblem(err) {
				p.add(prefixName(f.prefix), "%v", err)
			}
		}
	}
	return out, p.err()
}

// ensembleSource is a task's source: a grid and a continuous (ensemble)
// attribute of it.
type ensembleSource struct {
	version *Version
	attr    *objects.Attribute
	cells   int
	width   int
}

// loadEnsembleSource resolves the source of location-wise, loss-calculation
// and profit-calculation: a regular or masked grid the caller may read, and
// a continuous attribute of it (an ensemble; a single continuous attribute
// is an ensemble of one realisation).
func loadEnsembleSource(ctx context.Context, env *Env, req Request, src Source) (*ensembleSource, error) {
	v, err := loadObject(ctx, env, req.Access, req.Org, "source", src.Object, false)
	if err != nil {
		return nil, err
	}
	if err := requireKind("source", v, gridKinds...); err != nil {
		return nil, err
	}
	a, err := v.Object.ResolveAttribute(src.Attribute)
	if err != nil {
		return nil, invalid("source.attribute", "attribute not found: %v", err)
	}
	if !a.IsContinuous() || a.Width() < 1 {
		return nil, invalid("source.attribute", "attribute %q is a %s attribute, not a continuous ensemble", a.Name, a.Type)
	}
	n, err := v.Object.ExpectedLength(a.List)
	if err != nil {
		return nil, dataOf("source", v, &objects.DataError{Err: err})
	}
	return &ensembleSource{version: v, attr: a, cells: int(n), width: a.Width()}, nil
}

// loadGridTarget resolves a grid target the caller may write to, with as
// many cells as the source.
func loadGridTarget(ctx context.Context, env *Env, req Request, ref ObjectRef, src *ensembleSource) (*Version, error) {
	v, err := loadObject(ctx, env, req.Access, req.Org, "target", ref, true)
	if err != nil {
		return nil, err
	}
	if err := requireKind("target", v, gridKinds...); err != nil {
		return nil, err
	}
	n, err := v.Object.ExpectedLength(v.Object.AttributeLists()[0])
	if err != nil {
		return nil, dataOf("target", v, &objects.DataError{Err: err})
	}
	if int(n) != src.cells {
		return nil, invalid("target", "the target has %d cells, the source's ensemble %d: they must be the same grid or have as many cells", n, src.cells)
	}
	return v, nil
}

// tileBytes is the memory of the buffers the reader fills: ensemble.Process's
// read buffers, ensemble.BufferBytes (the library's per-goroutine
// transposition buffers are small beside them).
func (s *ensembleSource) tileBytes() float64 {
	return float64(ensemble.BufferBytes(s.cells, s.width, objects.DefaultEnsembleTile))
}

// process streams the source's ensemble through the reducers, tile by tile,
// reporting progress between lo and hi percent. An unusable blob is a 422
// naming the source.
func (s *ensembleSource) process(ctx context.Context, progress func(int, string), lo, hi int, rs ...ensemble.Reducer) error {
	v := s.version
	er, err := v.Object.OpenEnsemble(ctx, v.Blobs, s.attr, 0)
	if err != nil {
		return dataOf("source", v, err)
	}
	defer er.Close()
	err = ensemble.ProcessWithProgress(ctx, er, scaleProgress(progress, lo, hi, "processing the realisations"), rs...)
	if err != nil && objects.IsDataError(err) {
		return dataOf("source", v, err)
	}
	return err
}

type locationWisePlan struct {
	env    *Env
	req    Request
	p      *LocationWiseParams
	source *ensembleSource
	target *Version
}

// PrepareLocationWise validates a location-wise request.
func PrepareLocationWise(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeLocationWise(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &locationWisePlan{env: env, req: req, p: p}
	if pl.source, err = loadEnsembleSource(ctx, env, req, p.Source); err != nil {
		return nil, err
	}
	if pl.target, err = loadGridTarget(ctx, env, req, p.Target, pl.source); err != nil {
		return nil, err
	}
	// Memory: the read buffers and the outputs; disk: the outputs,
	// one float64 column each.
	outputs := 8 * float64(pl.source.cells) * float64(outputCount(p.Operations))
	if err := env.admit(req, "source", pl.source.tileBytes()+2*outputs, outputs); err != nil {
		return nil, err
	}
	return pl, nil
}

// outputCount is the number of attributes the operations write.
func outputCount(o ensemble.Operations) int {
	n := len(o.Quantiles) + len(o.ProbabilityAbove) + len(o.MeanAbove)
	if o.Summary {
		n += 4
	}
	return n
}

func (pl *locationWisePlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	src := pl.source
	progress(2, "reading the realisations")
	var outs []ensemble.Output
	if pl.env.Ensembles != nil && pl.env.Ensembles.Sharded(src.cells) {
		// In a cluster, a large ensemble is processed as tiles.
		var err error
		if outs, err = src.processOnCluster(ctx, pl.env, pl.p.Operations, progress, 5, 80); err != nil {
			return nil, err
		}
	} else {
		lw, err := ensemble.NewLocationWise(pl.p.Operations, src.cells, src.width)
		if err != nil {
			return nil, err
		}
		if err := src.process(ctx, progress, 5, 80, lw); err != nil {
			return nil, err
		}
		outs = lw.Outputs()
	}
	progress(82, "writing the statistics")
	ref := pl.p.Target
	ws := ObjectRef{Org: ref.Org, Workspace: ref.Workspace, ObjectID: pl.target.ObjectID}
	writes, err := storeOutputs(ctx, pl.env, ws.Org, ws.Workspace, outs, src.cells)
	if err != nil {
		return nil, err
	}
	w, err := commit(ctx, pl.env, pl.target, ws, pl.req.User, writes)
	if err != nil {
		return nil, err
	}
	list := w.Object.AttributeLists()[0]
	attrs := make([]any, len(outs))
	names := make([]string, len(outs))
	for i, o := range outs {
		attrs[i] = map[string]any{"reference": nameExpression(&objects.Attribute{List: list, Name: o.Name}), "name": o.Name}
		names[i] = o.Name
	}
	r := pl.env.targetResult(w)
	r["attributes"] = attrs
	return map[string]any{
		"message": fmt.Sprintf("Location-wise statistics written: %s.", strings.Join(names, ", ")),
		"target":  r,
	}, nil
}

// storeOutputs stores each location-wise output as a blob and returns the
// writes creating its attribute (named as the output) on a target of cells
// rows.
func storeOutputs(ctx context.Context, env *Env, org, ws string, outs []ensemble.Output, cells int) ([]attributeWrite, error) {
	writes := make([]attributeWrite, len(outs))
	for i, o := range outs {
		key, err := storeFloat64(ctx, env, org, ws, [][]float64{o.Values}, []string{valuesColumn})
		if err != nil {
			return nil, err
		}
		writes[i] = statisticWrite(o.Name, key, cells)
	}
	return writes, nil
}

// statisticWrite is the write that creates the statistic name, of cells
// values stored in the blob key.
func statisticWrite(name, key string, cells int) attributeWrite {
	return attributeWrite{Target: objects.AttributeTarget{Operation: objects.OperationCreate, Name: name},
		Values: objects.ContinuousValues{Data: key, Length: int64(cells), Width: 1}}
}

// valuesColumn is the Parquet column name of every single-column attribute
// blob the tasks write (values, and a category's keys). It is fixed, never
// derived from the attribute's name: attribute names are the user's (any
// string the schemas allow), Parquet column names are internal and carry no
// meaning (column order is normative, names are not, docs/objects.md 3).
const valuesColumn = "values"

// realisationPrefix prefixes the Parquet column names of the ensemble blobs
// the tasks write (r_0, r_1, ...), fixed for the same reason.
const realisationPrefix = "r"
