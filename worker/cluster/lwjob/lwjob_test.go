package lwjob_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
)

var ops = ensemble.Operations{Summary: true, Quantiles: []float64{0.1, 0.5, 0.9}, ProbabilityAbove: []float64{0.5}, MeanAbove: []float64{1}}

// columns is an ensemble of 5,000 cells × 7 realisations with missing
// values (NaN, ±Inf) and one cell without any finite value.
func columns(t *testing.T) [][]float64 {
	spec := synthetic.Simulation(synthetic.Small, synthetic.DefaultSeed)
	c, err := synthetic.New(spec)
	require.NoError(t, err)
	cols := c.Ensemble(5000, 7)
	cols[2][10], cols[4][11], cols[0][12] = math.NaN(), math.Inf(1), math.Inf(-1)
	for r := range cols {
		cols[r][13] = math.NaN()
	}
	return cols
}

// single is the single-process result: ensemble.Process over the whole
// ensemble.
func single(t *testing.T, cols [][]float64) []ensemble.Output {
	lw, err := ensemble.NewLocationWise(ops, len(cols[0]), len(cols))
	require.NoError(t, err)
	require.NoError(t, ensemble.Process(context.Background(), ensemble.NewColumnsSource(cols, 512), lw))
	return lw.Outputs()
}

func requireBits(t *testing.T, want, got []ensemble.Output, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for o := range want {
		require.Equal(t, want[o].Name, got[o].Name, what)
		require.Equal(t, len(want[o].Values), len(got[o].Values), what)
		for i, v := range want[o].Values {
			if math.Float64bits(v) != math.Float64bits(got[o].Values[i]) {
				t.Fatalf("%s: %s of cell %d: %v, want %v", what, want[o].Name, i, got[o].Values[i], v)
			}
		}
	}
}

// Statistics of tiles, encoded as the inputs travel, equal the same cells
// of the single-process statistics.
func TestStatisticsOfTiles(t *testing.T) {
	cols := columns(t)
	want := single(t, cols)
	n, r := len(cols[0]), len(cols)
	got := make([]ensemble.Output, len(want))
	for o := range got {
		got[o] = ensemble.Output{Name: want[o].Name, Values: make([]float64, n)}
	}
	for lo := 0; lo < n; lo += 1300 {
		hi := min(n, lo+1300)
		tile := ensemble.Tile{Lo: lo, Columns: make([][]float64, r)}
		for c := range tile.Columns {
			tile.Columns[c] = cols[c][lo:hi]
		}
		b, err := lwjob.Statistics(context.Background(), ops, r, hi-lo, lwjob.EncodeTile(nil, tile))
		require.NoError(t, err)
		require.Len(t, b, 8*(hi-lo)*len(want))
		for o := range got {
			for i := range hi - lo {
				got[o].Values[lo+i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*(o*(hi-lo)+i):]))
			}
		}
	}
	requireBits(t, want, got, "tiles of 1300 cells")
	_, err := lwjob.Statistics(context.Background(), ops, r, 10, make([]byte, 8))
	require.ErrorContains(t, err, "input of 8 bytes")
}

// Runner and Handler on an embedded server: the statistics equal the
// single-process ones bit for bit for several tile sizes, on one and two
// compute workers, with a worker killed in the middle of a tile; progress
// reaches its total; the cluster keeps nothing of the job afterwards.
func TestRunner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	cols := columns(t)
	want := single(t, cols)
	for _, tc := range []struct {
		tile, workers int
		kill          bool
	}{{700, 1, false}, {1024, 2, true}, {2500, 1, true}, {5000, 2, false}} {
		what := fmt.Sprintf("tiles of %d, %d workers, kill %v", tc.tile, tc.workers, tc.kill)
		r := &lwjob.Runner{Queue: q}
		var got []ensemble.Output
		var last, total int
		killed, evs, err := clustertest.Run(t, ctx, q, (&lwjob.Handler{Inputs: q}).Compute, tc.workers, tc.kill, func(ctx context.Context) error {
			var err error
			got, err = r.Run(ctx, ops, ensemble.NewColumnsSource(cols, tc.tile), func(d, n int) {
				require.GreaterOrEqual(t, float64(d)/float64(n), float64(last)/float64(max(total, 1)))
				last, total = d, n
			})
			return err
		})
		require.NoError(t, err, what)
		require.Equal(t, total, last, what)
		var keys []string
		for lo := 0; lo < len(cols[0]); lo += tc.tile {
			keys = append(keys, lwjob.Tile{Lo: lo, Hi: min(len(cols[0]), lo+tc.tile)}.Key())
		}
		clustertest.CheckEvents(t, keys, killed, evs)
		requireBits(t, want, got, what)
		clustertest.RequireEmpty(t, ctx, nc)
	}
}

// A Runner whose context ends cancels the cluster job and deletes its
// inputs: no compute worker runs, so the tiles stay queued until then.
func TestRunnerCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	cols := columns(t)
	r := &lwjob.Runner{Queue: q, Cells: 1000}
	require.True(t, r.Sharded(len(cols[0])))
	require.False(t, (&lwjob.Runner{}).Sharded(len(cols[0])))
	clustertest.Cancel(t, ctx, q, nc, func(ctx context.Context) error {
		_, err := r.Run(ctx, ops, ensemble.NewColumnsSource(cols, 1000), nil)
		return err
	})
}
