package kriging

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// Runs of targets starting at multiples of EstimateChunk (the last one
// ending at the end of the list) estimate exactly as the same targets in
// the estimate of the whole list, as EstimateChunk documents; a run that
// starts elsewhere may differ (its factorisations are updated from other
// targets), which is why the rule is needed.
func TestEstimateChunkRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	data := randomPoints(rng, 300, 1000, 1000, 200)
	values := make([]float64, 300)
	for i := range values {
		values[i] = rng.NormFloat64()
	}
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{100, 60, 2}, [3]float64{10, 16, 100}, geostat.Rotation{})
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	nt := len(targets) / 3
	require.Greater(t, nt, 2*EstimateChunk)
	k := mustKriger(t, data, values, Params{Variogram: twoStructure(t, 0.1), Method: Ordinary, Search: wide(300, 16)})
	whole := allOutputs(nt)
	require.NoError(t, k.Estimate(t.Context(), targets, &whole, nil))
	for _, run := range [][2]int{{0, EstimateChunk}, {EstimateChunk, 2 * EstimateChunk}, {2 * EstimateChunk, nt}, {EstimateChunk, nt}} {
		lo, hi := run[0], run[1]
		part := allOutputs(hi - lo)
		require.NoError(t, k.Estimate(t.Context(), targets[3*lo:3*hi], &part, nil))
		for q := lo; q < hi; q++ {
			require.Equal(t, math.Float64bits(whole.Estimate[q]), math.Float64bits(part.Estimate[q-lo]), "run %v, target %d", run, q)
			require.Equal(t, math.Float64bits(whole.Variance[q]), math.Float64bits(part.Variance[q-lo]), "run %v, target %d", run, q)
			require.Equal(t, math.Float64bits(whole.Efficiency[q]), math.Float64bits(part.Efficiency[q-lo]), "run %v, target %d", run, q)
		}
	}
	// A run starting inside a chunk is estimated from other factorisation
	// updates: equal to rounding, not necessarily bit for bit.
	lo := EstimateChunk / 2
	part := allOutputs(nt - lo)
	require.NoError(t, k.Estimate(t.Context(), targets[3*lo:], &part, nil))
	differ := 0
	for q := lo; q < nt; q++ {
		require.InDelta(t, whole.Estimate[q], part.Estimate[q-lo], 1e-9, "target %d", q)
		if math.Float64bits(whole.Estimate[q]) != math.Float64bits(part.Estimate[q-lo]) {
			differ++
		}
	}
	t.Logf("a run starting at target %d differs in the last bits at %d of %d targets", lo, differ, nt-lo)
}
