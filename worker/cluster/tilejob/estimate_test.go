package tilejob_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// TestEstimateCountsInputAndTile checks the shard memory estimate against
// its definition by hand: three times the input and a tile of columns
// twice; the last tile is shorter.
func TestEstimateCountsInputAndTile(t *testing.T) {
	const targets, input, columns = 10000, 123456, 3
	raw, err := json.Marshal(map[string]any{"version": 1, "input": "d", "targets": targets, "tile": 4096, "input_bytes": input, "columns": columns})
	require.NoError(t, err)
	tiles := tilejob.Tiles(targets, 4096)
	require.Len(t, tiles, 3)
	h := &tilejob.Handler{}
	for _, tl := range tiles {
		got, err := h.Estimate(context.Background(), "tile-a", raw, tl.Key())
		require.NoError(t, err)
		require.Equal(t, int64(3*input+2*8*(tl.Hi-tl.Lo)*columns), got, tl.Key())
	}
	_, err = h.Estimate(context.Background(), "tile-a", raw, "t1-2")
	require.ErrorContains(t, err, "no tile")
}
