package tasks

import (
	"context"
	"fmt"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/objects"
)

// NormalScoreParams are the parameters of the normal-score task.
type NormalScoreParams struct {
	// Forward is true for data → standard normal, false for backward.
	Forward      bool
	Source       Source
	Target       Target
	Distribution ObjectRef
}

// normalScoreRules declares the members of a normal-score request.
func normalScoreRules(source, target *object) *object {
	return &object{doc: "Normal-score transform through a distribution object, forward or backward; a missing value stays missing; probabilities are clamped to [1e-12, 1 − 1e-12] (scores within ±7.03) and backward values to the distribution's bounds (docs/api.md 8.4)", fields: []*rule{
		str("method", "forward: data → standard normal, y = G⁻¹(F(z)); backward: standard normal → data, z = F⁻¹(G(y))").values("forward", "backward").req(),
		member("source", source, "The values to transform (a continuous attribute of a point set, intervals or a grid)").req(),
		member("target", target, "Where the transformed values are written: one value per source element").req(),
		objectRef("distribution", "The non-parametric-continuous-cumulative-distribution object (F, with its tails)"),
	}}
}

// DecodeNormalScore decodes and checks the fields of a normal-score request.
func DecodeNormalScore(raw []byte) (*NormalScoreParams, error) {
	var p problems
	f := body(raw, params(CurrentShape, "normal-score"), &p)
	out := &NormalScoreParams{}
	if m, ok := f.strOK("method"); ok && m != "" {
		if !slices.Contains(f.rule("method").enum, m) {
			p.add(f.name("method"), "must be \"forward\" or \"backward\" (got %q)", m)
		}
		out.Forward = m == "forward"
	}
	out.Source = f.currentSource("source")
	out.Target = f.currentTarget("target")
	out.Distribution = f.objectURL("distribution")
	return out, p.err()
}

type normalScorePlan struct {
	env *Env
	req Request
	p   *NormalScoreParams
	endpoints
	dist *geostat.Distribution
	n    int64
}

// PrepareNormalScore validates a normal-score request. Source and target
// are point sets, downhole intervals, regular or masked grids; the source
// attribute is a single continuous column (an ensemble is refused); a
// target other than the source object needs as many elements as the
// source attribute has values (they are matched by position). The
// distribution object is read and checked at submit.
//
// Decisions (docs/api.md): a missing value stays missing; scores are
// clamped to ±7.034 (cumulative probabilities within [1e-12, 1 − 1e-12]),
// and a backward transform maps every score into the distribution's range
// (its tails' bounds, or its end nodes without extrapolation).
func PrepareNormalScore(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeNormalScore(req.Body)
	if err != nil {
		return nil, err
	}
	pl := &normalScorePlan{env: env, req: req, p: p}
	if pl.endpoints, err = loadEndpoints(ctx, env, req, p.Source, p.Target, targetKinds, targetKinds); err != nil {
		return nil, err
	}
	if pl.n, err = pl.source.Object.ExpectedLength(pl.sourceAttr.List); err != nil {
		return nil, dataOf("source", pl.source, err)
	}
	if pl.target.ObjectID != pl.source.ObjectID {
		nt, err := elements("target", pl.target)
		if err != nil {
			return nil, err
		}
		if nt != pl.n {
			return nil, invalid("target", "the target has %d elements, the source attribute %d values: normal-score writes one value per source value, matched by position", nt, pl.n)
		}
	}
	if pl.dist, err = loadDistribution(ctx, env, req, "distribution", p.Distribution); err != nil {
		return nil, err
	}
	// Memory: the values in and out; disk: one float64 column.
	if err := env.admit(req, "source", float64(pl.n)*8*3, float64(pl.n)*8); err != nil {
		return nil, err
	}
	return pl, nil
}

// loadDistribution reads and builds a distribution object.
func loadDistribution(ctx context.Context, env *Env, req Request, field string, ref ObjectRef) (*geostat.Distribution, error) {
	dv, err := loadObject(ctx, env, req.Access, req.Org, field, ref, false)
	if err != nil {
		return nil, err
	}
	if err := requireKind(field, dv, objects.KindDistribution); err != nil {
		return nil, err
	}
	d, err := dv.Object.Distribution.Build(ctx, dv.Blobs)
	if err != nil {
		return nil, dataOf(field, dv, err)
	}
	return d, nil
}

func (pl *normalScorePlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	direction := "backward"
	if pl.p.Forward {
		direction = "forward"
	}
	var n int
	w, err := pl.mapColumn(ctx, pl.env, pl.req, pl.p.Target, progress, func(values []float64) ([]float64, error) {
		n = len(values)
		out := make([]float64, len(values))
		prog := scaleProgress(progress, 10, 85, "transforming")
		if pl.p.Forward {
			return out, pl.dist.NormalScoresAll(ctx, out, values, prog)
		}
		return out, pl.dist.BackTransformsAll(ctx, out, values, prog)
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"message": fmt.Sprintf("Normal score transform (%s) completed successfully: %d values.", direction, n),
		"target":  pl.env.targetAttributeResult(w),
	}, nil
}
