package tasks

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
	"github.com/geostat-engine/geostat/worker/objects"
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

// EnsembleStatistics runs the location-wise statistics of large ensembles
// as tiles on the cluster, bit-identical to ensemble.Process in this
// process. Package worker/cluster/lwjob implements it (lwjob.Runner).
type EnsembleStatistics interface {
	// Sharded reports whether the statistics of n cells run as tiles.
	Sharded(n int) bool
	// TileCells is the largest tile (cells) to read the ensemble in; a
	// row group is a tile when it is smaller.
	TileCells() int
	// Run returns the statistics of src as ensemble.LocationWise.Outputs;
	// progress gets a fraction done/total.
	Run(ctx context.Context, ops ensemble.Operations, src ensemble.Source, progress func(done, total int)) ([]ensemble.Output, error)
}

// processOnCluster computes the location-wise statistics of the source's
// ensemble on the cluster (env.Ensembles), reading it a tile at a time,
// with progress between lo and hi percent. An unusable blob is a 422
// naming the source, as in process.
func (s *ensembleSource) processOnCluster(ctx context.Context, env *Env, ops ensemble.Operations, progress func(int, string), lo, hi int) ([]ensemble.Output, error) {
	v := s.version
	er, err := v.Object.OpenEnsemble(ctx, v.Blobs, s.attr, min(env.Ensembles.TileCells(), objects.DefaultEnsembleTile))
	if err != nil {
		return nil, dataOf("source", v, err)
	}
	defer er.Close()
	outs, err := env.Ensembles.Run(ctx, ops, er, scaleProgress(progress, lo, hi, "processing the realisations (tiles stored, then done)"))
	if err != nil && objects.IsDataError(err) {
		return nil, dataOf("source", v, err)
	}
	return outs, err
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
