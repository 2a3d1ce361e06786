package kriging

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/stretchr/testify/require"
)

// TestNewContextCancel cancels (through a deadline) the set-up of a kriger
// over a million data, which takes seconds (merging, ordering, the
// neighbour index): NewContext returns the context's error within 2 s of
// the cancel. New, which conditional simulations used, ran it to the end.
func TestNewContextCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("a million data")
	}
	n := 1_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	coords := make([]float64, 3*n)
	values := make([]float64, n)
	for i := range coords {
		coords[i] = rng.Float64() * 1e5
	}
	for i := range values {
		values[i] = rng.NormFloat64()
	}
	e := geostat.Ellipsoid{Major: 100, SemiMajor: 100, Minor: 100}
	v, err := geostat.NewVariogram(0.1, geostat.Structure{Type: geostat.Spherical, Contribution: 0.9, Ellipsoid: e})
	require.NoError(t, err)
	p := Params{Variogram: v, Search: neighbor.Params{Ellipsoid: e, MaxSamples: 20, MinSamples: 1}}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = NewContext(ctx, coords, values, p)
	require.ErrorIs(t, err, context.Canceled, "a cancelled context stops it before any work")

	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := NewContext(ctx, coords, values, p)
		done <- err
	}()
	<-ctx.Done()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(2 * time.Second):
		t.Fatal("the set-up did not stop within 2 s of the cancel")
	}
}
