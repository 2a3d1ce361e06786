package neighbor

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/require"
)

// TestNewIndexContextCancel checks that the tree build stops when its
// context is done, and that NewIndexContext returns the context's error.
func TestNewIndexContextCancel(t *testing.T) {
	n := 1 << 17
	rng := rand.New(rand.NewPCG(3, 4))
	coords := make([]float64, 3*n)
	for i := range coords {
		coords[i] = rng.Float64() * 1000
	}
	p := Params{Ellipsoid: geostat.Ellipsoid{Major: 10, SemiMajor: 10, Minor: 10}, MaxSamples: 8}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewIndexContext(ctx, coords, nil, nil, p)
	require.ErrorIs(t, err, context.Canceled)

	// The build itself stops at its first large node once done is closed.
	ix, err := NewIndex(coords, nil, nil, p)
	require.NoError(t, err)
	closed := make(chan struct{})
	close(closed)
	var tr kdTree
	require.False(t, tr.build(closed, ix.pts, ix.orig, ix.hole))
	require.True(t, tr.build(nil, ix.pts, ix.orig, ix.hole))
	require.Equal(t, ix.tree.nodes, tr.nodes, "the same tree when not cancelled")
}
