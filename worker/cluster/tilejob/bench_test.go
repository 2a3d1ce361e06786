package tilejob_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// benchKNN is the medium knn case: 50,000 sources onto 1,000,000 cells.
func benchKNN(b *testing.B) *tilejob.Estimation {
	c, err := synthetic.New(synthetic.KNN(synthetic.Medium, synthetic.DefaultSeed))
	require.NoError(b, err)
	return &tilejob.Estimation{Kind: tilejob.KNN, Coords: c.Coords, Values: c.Grades,
		Search: neighbor.Params{Ellipsoid: synthetic.SearchEllipsoid(), MaxSamples: 16, MinSamples: 1}, Target: tilejob.Target{Grid: c.Grid}}
}

// BenchmarkKNNOneProcess is the medium knn in one process: index and
// estimate over every cell (the reference for BenchmarkKNNTiles).
func BenchmarkKNNOneProcess(b *testing.B) {
	e := benchKNN(b)
	for b.Loop() {
		es, err := tilejob.NewEstimator(e)
		require.NoError(b, err)
		_, err = es.Estimate(context.Background(), 0, e.Target.Len(), nil)
		require.NoError(b, err)
	}
}

// BenchmarkKNNTiles is the medium knn as tiles of 131,072 cells (8 shards)
// through an embedded server and one Work loop in the same process: the
// cost of the queue, the input and results in the Object Store and the
// assembly, beside BenchmarkKNNOneProcess.
func BenchmarkKNNTiles(b *testing.B) {
	e := benchKNN(b)
	ctx := context.Background()
	q, _ := clustertest.Queue(b, ctx)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, (&tilejob.Handler{Inputs: q}).Compute, nil) }()
	defer func() { stop(); <-done }()
	r := &tilejob.Runner{Queue: q, TileTargets: 1 << 17}
	for b.Loop() {
		_, err := r.Run(ctx, e, nil)
		require.NoError(b, err)
	}
}
