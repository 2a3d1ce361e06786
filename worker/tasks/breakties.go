package tasks

import (
	"context"
	"math"

	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
)

type breakTiesPlan struct {
	env *Env
	req Request
	p   *BreakTiesParams
	endpoints
	coords []float64
}

// PrepareBreakTies validates a break-ties request. The target's locations
// must be the source's: the same object, or as many locations at the same
// coordinates.
func PrepareBreakTies(ctx context.Context, env *Env, req Request) (Plan, error) {
	p, err := DecodeBreakTies(req.Shape, req.Body)
	if err != nil {
		return nil, err
	}
	pl := &breakTiesPlan{env: env, req: req, p: p}
	if pl.endpoints, err = loadEndpoints(ctx, env, req, p.Source, p.Target, targetKinds, targetKinds); err != nil {
		return nil, err
	}
	if pl.coords, err = pl.source.Object.ListLocations(ctx, pl.source.Blobs, pl.sourceAttr.List); err != nil {
		return nil, dataOf("source", pl.source, err)
	}
	if pl.target.ObjectID != pl.source.ObjectID {
		tc, err := pl.target.Object.Locations(ctx, pl.target.Blobs)
		if err != nil {
			return nil, dataOf("target", pl.target, err)
		}
		if len(tc) != len(pl.coords) {
			return nil, invalid("target", "the target has %d locations, the source %d: break-ties writes onto the source's locations", len(tc)/3, len(pl.coords)/3)
		}
		for i := range tc {
			if tc[i] != pl.coords[i] {
				return nil, invalid("target", "location %d of the target differs from the source's: break-ties writes onto the source's locations", i/3)
			}
		}
	}
	// Output: one float64 column over the locations.
	if err := env.admit(req, "source", float64(len(pl.coords))*8*6, float64(len(pl.coords)/3)*8); err != nil {
		return nil, err
	}
	return pl, nil
}

func (pl *breakTiesPlan) Run(ctx context.Context, progress func(int, string)) (any, error) {
	w, err := pl.mapColumn(ctx, pl.env, pl.req, pl.p.Target, progress, func(values []float64) ([]float64, error) {
		return breakTies(ctx, values, pl.coords, pl.p.Neighborhood, pl.p.Seed, scaleProgress(progress, 5, 85, "breaking ties"))
	})
	if err != nil {
		return nil, err
	}
	if pl.req.Shape == SeedShape {
		return pl.env.seedResult(w, "Break ties completed successfully."), nil
	}
	return map[string]any{"message": "Break ties completed successfully.", "target": pl.env.targetAttributeResult(w)}, nil
}

// breakTies breaks the ties of values at coords as the break-ties task
// does (and consim's first step): tieOptions for the seed, local means over
// nb (nil: the library's default neighbourhood), progress (may be nil)
// called with the local means done.
func breakTies(ctx context.Context, values, coords []float64, nb *Neighborhood, seed int64, progress func(done, total int)) ([]float64, error) {
	opts := tieOptions(values, seed)
	opts.Progress = progress
	var np *neighbor.Params
	if nb != nil {
		prm := nb.Params()
		np = &prm
	}
	return ties.Break(ctx, values, coords, np, opts)
}

// tieOptions are the tie-breaking options of break-ties (and of consim's
// first step) for data values and a seed. Grades are non-negative: when
// the data have no negative value, zero is a physical lower bound and tied
// minimum values are spread upwards only (docs/math.md section 6, the
// one-sided variant).
func tieOptions(values []float64, seed int64) ties.Options {
	opts := ties.Options{Seed: uint64(seed)}
	lowest := math.Inf(1)
	for _, v := range values {
		if v < lowest {
			lowest = v
		}
	}
	if lowest >= 0 {
		zero := 0.0
		opts.LowerBound = &zero
	}
	return opts
}
