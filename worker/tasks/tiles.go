package tasks

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// TileEstimator runs knn, idw and kriging estimates of large targets as
// tiles of targets on the cluster, bit-identical to the estimate in this
// process. Package worker/cluster/tilejob implements it (tilejob.Runner).
type TileEstimator interface {
	// Sharded reports whether an estimate of n targets runs as tiles.
	Sharded(n int) bool
	// Run returns the estimate's columns (the estimate, then e.Outputs),
	// one value per target; progress gets the done tiles and their total.
	Run(ctx context.Context, e *tilejob.Estimation, progress func(done, total int)) ([][]float64, error)
}

// tiled reports whether an estimate onto n targets runs as tiles on the
// cluster: the worker is in a cluster and the target is large.
func (env *Env) tiled(n int) bool { return env.Tiles != nil && env.Tiles.Sharded(n) }

// estimateTiles runs e (its target set from the task's target object and
// the locations read from it) on the cluster and returns its columns.
func (ep *endpoints) estimateTiles(ctx context.Context, env *Env, e *tilejob.Estimation, targets []float64, progress func(int, string)) ([][]float64, error) {
	var err error
	if e.Target, err = tileTarget(ctx, ep.target, targets); err != nil {
		return nil, err
	}
	return env.Tiles.Run(ctx, e, scaleProgress(progress, 15, 85, "estimating (tiles done)"))
}

// tileTarget is the target of a tile job: the grid's geometry for a grid
// (a compute worker computes the cell centres of its tile), the locations
// read for other objects. The geometry's centres are checked against the
// locations, bit for bit.
func tileTarget(ctx context.Context, v *Version, targets []float64) (tilejob.Target, error) {
	var t tilejob.Target
	g := v.Object.Grid
	switch {
	case g == nil:
		return tilejob.Target{Points: targets}, nil
	case g.Masked:
		m, err := g.MaskedGeometry(ctx, v.Blobs)
		if err != nil {
			return t, dataOf("target", v, err)
		}
		t.Masked = m
	default:
		gg, err := g.Geometry()
		if err != nil {
			return t, invalid("target", "%v", err)
		}
		t.Grid = gg
	}
	n := len(targets) / 3
	if t.Len() != n {
		return t, fmt.Errorf("tiles: the target's geometry has %d cells, its locations %d", t.Len(), n)
	}
	var buf []float64
	for lo := 0; lo < n; lo += 1 << 16 {
		hi := min(n, lo+1<<16)
		buf = t.Coords(lo, hi, buf)
		for i, x := range buf {
			if math.Float64bits(x) != math.Float64bits(targets[3*lo+i]) {
				return t, fmt.Errorf("tiles: the target's geometry puts cell %d elsewhere than its locations", lo+i/3)
			}
		}
	}
	return t, nil
}
