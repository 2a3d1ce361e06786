package tasks

import (
	"context"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/blockmodel"
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

// estimation is what an estimate onto the target needs (readEstimation),
// and in a cluster with a large target the target of its tile job.
type estimation struct {
	// coords and values are the source locations and values (filtered-out
	// rows NaN).
	coords, values []float64
	// targets are the target locations; nil for a tiled grid target,
	// whose cell centres the api worker never holds (the compute workers
	// compute those of their tiles).
	targets []float64
	// keep are the target rows the target filter keeps (nil: all).
	keep []bool
	n    int // targets
	// tiled is set when the estimate runs as tiles on the cluster, with
	// target as the tile job's target.
	tiled  bool
	target tilejob.Target
	// blocks are the rows of a block model target (nil otherwise), in
	// canonical order: targets are their centroids.
	blocks *blockmodel.Blocks
}

// readEstimation reads what an estimate onto the target needs: the source
// data, the target locations and the target filter's rows; in a cluster, a
// grid target of more cells than a tile is read as its geometry rather than
// its cell centres.
func (ep *endpoints) readEstimation(ctx context.Context, env *Env, src Source, tgt Target) (*estimation, error) {
	var coords, values []float64
	var err error
	if ep.srcBM != nil {
		coords, values, err = ep.srcBM.sourceData(ctx, src.Filter)
	} else {
		coords, values, err = sourceData(ctx, ep.source, ep.sourceAttr, src.Filter, "source")
	}
	if err != nil {
		return nil, err
	}
	e := &estimation{coords: coords, values: values}
	if ep.tgtBM != nil {
		return e, ep.tgtBM.readTargets(ctx, env, tgt, e)
	}
	_, nTgt := ep.sizes()
	if g := ep.target.Object.Grid; g != nil && env.tiled(int(nTgt)) {
		e.tiled = true
		if g.Masked {
			if e.target.Masked, err = g.MaskedGeometry(ctx, ep.target.Blobs); err != nil {
				return nil, dataOf("target", ep.target, err)
			}
		} else if e.target.Grid, err = g.Geometry(); err != nil {
			return nil, dataOf("target", ep.target, err)
		}
		e.n = e.target.Len()
	} else {
		if e.targets, err = ep.target.Object.Locations(ctx, ep.target.Blobs); err != nil {
			return nil, dataOf("target", ep.target, err)
		}
		e.n = len(e.targets) / 3
		if env.tiled(e.n) {
			e.tiled, e.target = true, tilejob.Target{Points: e.targets}
		}
	}
	if e.keep, err = applyFilter(ctx, "target.filter", ep.target, tgt.Filter, e.n); err != nil {
		return nil, err
	}
	return e, nil
}

// estimateTiles runs the estimate of kind (with its power or kriging
// parameters and outputs set in est) on the cluster and returns its
// columns: the estimate, then est.Outputs.
func (in *estimation) estimateTiles(ctx context.Context, env *Env, est tilejob.Estimation, progress func(int, string)) ([][]float64, error) {
	est.Coords, est.Values, est.Target = in.coords, in.values, in.target
	return env.Tiles.Run(ctx, &est, scaleProgress(progress, 15, 85, "estimating (tiles done)"))
}
