package lwjob_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
)

// TestEstimateCountsInputAndOutputs checks the shard memory estimate
// against its definition by hand: 1,000 cells × 50 realisations (input
// twice) and summary + 2 quantiles + 1 cutoff pair = 8 outputs (twice).
func TestEstimateCountsInputAndOutputs(t *testing.T) {
	sp := lwjob.Spec{
		Version:      1,
		Operations:   ensemble.Operations{Summary: true, Quantiles: []float64{0.1, 0.9}, ProbabilityAbove: []float64{1}, MeanAbove: []float64{1}},
		Realisations: 50,
		Tiles:        []lwjob.Tile{{Lo: 0, Hi: 1000, Input: "x"}, {Lo: 1000, Hi: 1500, Input: "y"}},
	}
	raw, err := json.Marshal(sp)
	require.NoError(t, err)
	h := &lwjob.Handler{}
	got, err := h.Estimate(context.Background(), "lw-a", raw, "c0-1000")
	require.NoError(t, err)
	require.Equal(t, int64(2*8*1000*50+2*8*1000*8), got)
	got, err = h.Estimate(context.Background(), "lw-a", raw, "c1000-1500")
	require.NoError(t, err)
	require.Equal(t, int64(2*8*500*50+2*8*500*8), got)
	_, err = h.Estimate(context.Background(), "lw-a", raw, "c5-6")
	require.ErrorContains(t, err, "no tile")

	// Another job's spec is read anew, not the last job's.
	sp.Realisations, sp.Operations = 10, ensemble.Operations{Quantiles: []float64{0.5}}
	other, err := json.Marshal(sp)
	require.NoError(t, err)
	got, err = h.Estimate(context.Background(), "lw-b", other, "c0-1000")
	require.NoError(t, err)
	require.Equal(t, int64(2*8*1000*10+2*8*1000*1), got)
}
