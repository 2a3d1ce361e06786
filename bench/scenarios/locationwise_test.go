package scenarios

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/ensemble"
)

// The streaming Parquet source reads back every value the writer wrote, and
// the scenario's check accepts the library's statistics and catches a wrong
// one.
func TestLocationWiseSourceAndCheck(t *testing.T) {
	const seed, cells, R = 5, 3000, 7
	f, blob, err := writeEnsembleFile(seed, cells, R)
	require.NoError(t, err)
	defer os.Remove(f.Name())
	defer f.Close()
	src, err := newParquetSource(f, blob.Size, cells, R)
	require.NoError(t, err)
	require.Equal(t, cells, src.Cells())
	require.Equal(t, R, src.Realisations())
	buf := make([][]float64, R)
	for r := range buf {
		buf[r] = make([]float64, src.MaxTile())
	}
	tile, err := src.ReadTile(context.Background(), buf)
	require.NoError(t, err)
	require.Equal(t, cells, tile.Len())
	for r := range R {
		for i := 0; i < cells; i += 101 {
			require.Equal(t, ensembleValue(seed, r, i), tile.Columns[r][i], "r %d cell %d", r, i)
		}
	}
	src.Rewind()
	l, err := ensemble.NewLocationWise(locationWiseOps, cells, R)
	require.NoError(t, err)
	require.NoError(t, ensemble.Process(context.Background(), src, l))
	probes := []int{0, 17, cells - 1}
	require.NoError(t, checkLocationWise(seed, R, l, probes))
	l.Statistics().Quantiles[1][17] += 1e-9
	assert.ErrorContains(t, checkLocationWise(seed, R, l, probes), "cell 17 Quantile: 0.5")
}

func TestMedian(t *testing.T) {
	assert.Equal(t, 0.0, median(nil))
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 2, 3}))
}
