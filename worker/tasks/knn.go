package tasks

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

type knnPlan struct {
	env *Env
	req Request
	p   *KNNParams
	endpoints
}

// PrepareKNN validates a knn request: fields, references, object kinds,
// attributes. Every problem is an error before any job exists.
func PrepareKNN(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeKNN(req.Shape, req.Body)
	if err != nil {
		return nil, err
	}
	pl := &knnPlan{env: env, req: req, p: p}
	if pl.endpoints, err = prepareIndexEstimate(ctx, env, req, p.Source, p.Target); err != nil {
		return nil, err
	}
	return pl, nil
}

// prepareIndexEstimate loads and checks the endpoints of an estimator over
// knn's neighbour index (knn, idw: point-like sources, targets those or
// either grid kind) and admits the job. Memory: the index and the targets'
// coordinates and estimates; disk: one float64 column over the targets.
func prepareIndexEstimate(ctx context.Context, env *Env, req Request, src Source, tgt Target) (endpoints, error) {
	ep, err := loadEndpoints(ctx, env, req, src, tgt, estimateSourceKinds, estimateTargetKinds)
	if err != nil {
		return ep, err
	}
	nSrc, nTgt := ep.sizes()
	return ep, env.admit(req, "target", nSrc*80+nTgt*48, nTgt*8)
}

// checkTargetAttribute checks that an update target names an existing
// continuous attribute.
func checkTargetAttribute(field string, v *Version, t Target) error {
	if t.Update == "" {
		return nil
	}
	a, err := v.Object.ResolveAttribute(t.Update)
	if err != nil {
		return invalid(field+".reference", "attribute not found: %v", err)
	}
	if !a.IsContinuous() {
		return invalid(field+".reference", "attribute %q is a %s attribute; only continuous attributes can be updated", a.Name, a.Type)
	}
	return nil
}

// sourceData reads the source locations and attribute values, with the
// filtered-out rows set to NaN.
func sourceData(ctx context.Context, v *Version, a *objects.Attribute, f *Filter, field string) (coords, values []float64, err error) {
	coords, err = v.Object.ListLocations(ctx, v.Blobs, a.List)
	if err != nil {
		return nil, nil, dataOf(field, v, err)
	}
	if values, err = readColumn(ctx, v, a); err != nil {
		return nil, nil, dataOf(field, v, err)
	}
	keep, err := applyFilter(ctx, field+".filter", v, f, len(values))
	if err != nil {
		return nil, nil, err
	}
	maskOut(values, keep)
	for _, x := range values {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return coords, values, nil
		}
	}
	return nil, nil, &problem.Error{Status: http.StatusUnprocessableEntity, Type: problem.ComputeInvalidData, Title: "Invalid Object Data.",
		Detail: fmt.Sprintf("%s: attribute %q of %s has no finite value (after the filter): there is nothing to estimate from", field, a.Name, v.Path),
		Extra:  map[string]any{"field": field, "object": v.Path, "member": a.Name}}
}

func (pl *knnPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	w, err := pl.estimateOverIndex(ctx, pl.env, pl.req, p.Source, p.Target, p.Neighborhood, progress,
		tilejob.KNN, 0, func(ix *neighbor.Index, values, targets, out []float64, prog func(done, total int)) error {
			return ix.Mean(ctx, values, targets, out, prog)
		})
	if err != nil {
		return nil, err
	}
	if pl.req.Shape == SeedShape {
		return pl.env.seedResult(w, "KNN estimation completed successfully."), nil
	}
	return map[string]any{
		"message": "KNN estimation completed successfully.",
		"target":  pl.env.targetAttributeResult(w),
	}, nil
}

// indexEstimate fills out (one value per target, targets flat x,y,z) from
// the neighbour index ix over the source values, reporting progress.
type indexEstimate func(ix *neighbor.Index, values, targets, out []float64, progress func(done, total int)) error

// estimateOverIndex is the Run flow shared by the estimators over knn's
// neighbour index (knn, idw): read the source and the targets, index the
// source with the neighbourhood, fill one value per target with estimate
// (progress 15 to 85) and write the column as the target attribute. In a
// cluster, a large target is estimated as tiles (kind and power) instead.
func (ep *endpoints) estimateOverIndex(ctx context.Context, env *Env, req Request, src Source, tgt Target, nb Neighborhood,
	progress func(int, string), kind tilejob.Kind, power float64, estimate indexEstimate) (*written, error) {
	progress(2, "reading the source")
	in, err := ep.readEstimation(ctx, env, src, tgt)
	if err != nil {
		return nil, err
	}
	progress(10, "indexing the source")
	ix, err := neighbor.NewIndexContext(ctx, in.coords, in.values, nil, nb.Params())
	if err != nil {
		return nil, fmt.Errorf("neighborhood: %w", err)
	}
	out := make([]float64, in.n)
	if in.tiled {
		cols, err := in.estimateTiles(ctx, env, tilejob.Estimation{Kind: kind, Search: nb.Params(), Power: power}, progress)
		if err != nil {
			return nil, err
		}
		out = cols[0]
	} else if err := estimate(ix, in.values, in.targets, out, scaleProgress(progress, 15, 85, "estimating")); err != nil {
		return nil, err
	}
	progress(88, "writing the result")
	if ep.tgtBM != nil {
		return ep.tgtBM.commit(ctx, env, req, string(kind), in.blocks, out, in.keep)
	}
	return writeSingle(ctx, env, ep.target, tgt, req.User, out, in.keep)
}

// mapColumn is the Run flow shared by the tasks that map the source
// attribute to one new column over the same rows (normal-score,
// break-ties): read the source values, compute the column with f (which
// reports its own progress, up to 85) and write it as the target attribute
// on every row.
func (ep *endpoints) mapColumn(ctx context.Context, env *Env, req Request, tgt Target, progress func(int, string),
	f func(values []float64) ([]float64, error)) (*written, error) {
	progress(2, "reading the source")
	values, err := readColumn(ctx, ep.source, ep.sourceAttr)
	if err != nil {
		return nil, dataOf("source", ep.source, err)
	}
	out, err := f(values)
	if err != nil {
		return nil, err
	}
	progress(88, "writing the result")
	return writeSingle(ctx, env, ep.target, tgt, req.User, out, nil)
}

// writeSingle stores one column and writes it as the target attribute in a
// new version. keep (nil: every row) is the target filter's selection: the
// other rows keep their values on update and get no value on create.
func writeSingle(ctx context.Context, env *Env, target *Version, t Target, user store.User, values []float64, keep []bool) (*written, error) {
	ref := ObjectRef{Org: t.Object.Org, Workspace: t.Object.Workspace, ObjectID: target.ObjectID}
	if keep != nil {
		return commit(ctx, env, target, ref, user, []attributeWrite{{Target: attributeTarget(t), Column: values, Keep: keep}})
	}
	key, err := storeFloat64(ctx, env, ref.Org, ref.Workspace, [][]float64{values}, []string{valuesColumn})
	if err != nil {
		return nil, err
	}
	return commit(ctx, env, target, ref, user, []attributeWrite{{
		Target: attributeTarget(t),
		Values: objects.ContinuousValues{Data: key, Length: int64(len(values)), Width: 1},
	}})
}

// targetAttributeResult is the current shape's target member with the
// written attribute.
func (env *Env) targetAttributeResult(w *written) map[string]any {
	r := env.targetResult(w)
	r["attribute"] = map[string]any{"reference": nameExpression(w.Attribute), "name": w.Attribute.Name}
	return r
}

// nameExpression addresses an attribute by name, e.g.
// cell_attributes[?name=='x'] (the form of the result examples).
func nameExpression(a *objects.Attribute) string {
	n := strings.ReplaceAll(strings.ReplaceAll(a.Name, `\`, `\\`), "'", `\'`)
	return a.List + "[?name=='" + n + "']"
}
