package tasks

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// IDWParams are the parameters of the idw task.
type IDWParams struct {
	Source       Source
	Target       Target
	Neighborhood Neighborhood
	Power        float64
}

// idwRules declares the members of an idw request: knn's members plus the
// required power. Filters are nested in source and target, with the
// explicit nulls the client sends.
func idwRules(source, target, nb *object) *object {
	return &object{doc: "Inverse-distance-weighted estimate over knn's neighbours; a target at distance 0 of samples takes the mean of the coincident samples (docs/api.md 8.5)", fields: []*rule{
		member("source", source, "The samples and their attribute").req(),
		member("target", target, "The object and the attribute to write").req(),
		member("neighborhood", nb, "The search neighbourhood: the same neighbours as knn").req(),
		number("power", "The exponent p of the weights 1/h^p, h the ellipsoid-normalised distance; a finite number > 0 (1 linear, 2 classic)").positive().req(),
	}}
}

// DecodeIDW decodes and checks the fields of an idw request (current shape
// only).
func DecodeIDW(raw []byte) (*IDWParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "idw"), &p)
	out := &IDWParams{}
	out.Source = f.currentSource("source")
	out.Target = f.currentTarget("target")
	if n := f.neighbourhood(CurrentShape, "neighborhood"); n != nil {
		out.Neighborhood = *n
	}
	out.Power, _ = f.number("power")
	return out, p.err()
}

type idwPlan struct {
	env *Env
	req Request
	p   *IDWParams
	endpoints
}

// PrepareIDW validates an idw request: fields, references, object kinds
// (sources point sets or downhole intervals, targets those or either grid
// kind), attributes; it estimates memory and disk like knn.
//
// The estimate at a target x is Σ w_i z_i / Σ w_i with w_i = 1/h_i^power
// over the neighbours of knn (up to max_samples samples with the smallest
// ellipsoid-normalised distance h ≤ 1; fewer than min_samples: no value).
// Decisions (docs/api.md): a target at distance 0 of one or more samples
// takes their mean exactly; samples whose value is missing (or filtered
// out) are not candidates; target rows outside the target filter keep their
// values on update and get no value on create, as in knn.
func PrepareIDW(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeIDW(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &idwPlan{env: env, req: req, p: p}
	if pl.endpoints, err = prepareIndexEstimate(ctx, env, req, p.Source, p.Target); err != nil {
		return nil, err
	}
	return pl, nil
}

func (pl *idwPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	p := pl.p
	w, err := pl.estimateOverIndex(ctx, pl.env, pl.req, p.Source, p.Target, p.Neighborhood, progress,
		tilejob.IDW, p.Power, func(ix *neighbor.Index, values, targets, out []float64, prog func(done, total int)) error {
			return ix.IDW(ctx, values, p.Power, targets, out, prog)
		})
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"message": fmt.Sprintf("IDW estimation completed successfully (power %g).", p.Power),
		"target":  pl.env.targetAttributeResult(w),
	}, nil
}
