package tilejob_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// source is a small drill-hole data set with a NaN datum (a filtered-out
// row, as the tasks give it) and a grid of 13,500 cells over it: several
// kriging chunks.
func source(t *testing.T) *synthetic.Case {
	spec := synthetic.Kriging(synthetic.Small, synthetic.DefaultSeed)
	spec.GridSize = [3]int{30, 30, 15}
	c, err := synthetic.New(spec)
	require.NoError(t, err)
	c.Normal[5] = math.NaN()
	return c
}

// search is a neighbourhood twice the first structure's ranges, which
// reaches most cells of the grid.
func search(c *synthetic.Case) neighbor.Params {
	el := c.Variogram.Structures[0].Ellipsoid
	el.Major, el.SemiMajor, el.Minor = 2*el.Major, 2*el.SemiMajor, 2*el.Minor
	return neighbor.Params{Ellipsoid: el, MaxSamples: 12, MinSamples: 2, MaxPerOctant: 3}
}

// estimations are the three estimators over grid, masked-grid and point
// targets; kriging is ordinary block kriging with every diagnostic.
func estimations(t *testing.T) map[string]*tilejob.Estimation {
	c := source(t)
	mask := make([]bool, c.Grid.NumCells())
	for i := range mask {
		mask[i] = i%3 != 1 // 9,000 active cells: three kriging chunks
	}
	m, err := grid.NewMasked(c.Grid, mask)
	require.NoError(t, err)
	points := c.Grid.CellCentres(nil)[:3*9000]
	for i := range points {
		points[i] += 0.37 // off the cell centres
	}
	kp := kriging.Params{Variogram: c.Variogram, Method: kriging.Ordinary, Search: search(c),
		Discretisation: grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}, CellSize: c.Grid.CellSize, Rotation: c.Grid.Rotation}
	return map[string]*tilejob.Estimation{
		"knn-grid":       {Kind: tilejob.KNN, Coords: c.Coords, Values: c.Normal, Search: search(c), Target: tilejob.Target{Grid: c.Grid}},
		"idw-points":     {Kind: tilejob.IDW, Coords: c.Coords, Values: c.Normal, Search: search(c), Power: 2, Target: tilejob.Target{Points: points}},
		"kriging-masked": {Kind: tilejob.Kriging, Coords: c.Coords, Values: c.Normal, Kriging: kp, Outputs: tilejob.Diagnostics, Target: tilejob.Target{Masked: m}},
		"kriging-grid":   {Kind: tilejob.Kriging, Coords: c.Coords, Values: c.Normal, Kriging: kp, Outputs: []string{"variance"}, Target: tilejob.Target{Grid: c.Grid}},
	}
}

// single is the single-process result: the library calls of the tasks over
// every target at once (the target's CellCentres, ActiveCentres or points).
func single(t *testing.T, e *tilejob.Estimation) [][]float64 {
	ctx := context.Background()
	var targets []float64
	switch {
	case e.Target.Grid != nil:
		targets = e.Target.Grid.CellCentres(nil)
	case e.Target.Masked != nil:
		targets = e.Target.Masked.ActiveCentres(nil)
	default:
		targets = e.Target.Points
	}
	n := len(targets) / 3
	cols := make([][]float64, e.Columns())
	for i := range cols {
		cols[i] = make([]float64, n)
	}
	switch e.Kind {
	case tilejob.KNN, tilejob.IDW:
		ix, err := neighbor.NewIndex(e.Coords, e.Values, nil, e.Search)
		require.NoError(t, err)
		if e.Kind == tilejob.KNN {
			require.NoError(t, ix.Mean(ctx, e.Values, targets, cols[0], nil))
		} else {
			require.NoError(t, ix.IDW(ctx, e.Values, e.Power, targets, cols[0], nil))
		}
	case tilejob.Kriging:
		k, err := kriging.New(e.Coords, e.Values, e.Kriging)
		require.NoError(t, err)
		out := kriging.Output{Estimate: cols[0]}
		slots := map[string]*[]float64{"variance": &out.Variance, "samples": &out.Samples, "mean_distance": &out.MeanDistance,
			"slope": &out.Slope, "efficiency": &out.Efficiency}
		for i, o := range e.Outputs {
			*slots[o] = cols[1+i]
		}
		require.NoError(t, k.Estimate(ctx, targets, &out, nil))
	}
	return cols
}

func requireBits(t *testing.T, want, got [][]float64, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), what)
	for c := range want {
		require.Equal(t, len(want[c]), len(got[c]), what)
		finite := 0
		for i := range want[c] {
			if math.Float64bits(want[c][i]) != math.Float64bits(got[c][i]) {
				t.Fatalf("%s: column %d, target %d: %v, want %v", what, c, i, got[c][i], want[c][i])
			}
			if !math.IsNaN(want[c][i]) {
				finite++
			}
		}
		require.Greater(t, finite, len(want[c])/2, "%s: column %d mostly estimated", what, c)
	}
}

// The input decodes to an estimation whose tiles, estimated alone, equal
// the same targets of the single-process estimate bit for bit, for tiles of
// one and two kriging chunks.
func TestEncodeAndTiles(t *testing.T) {
	for name, e := range estimations(t) {
		want := single(t, e)
		b, err := tilejob.Encode(e)
		require.NoError(t, err)
		d, err := tilejob.Decode(b)
		require.NoError(t, err)
		require.Equal(t, e.Target.Len(), d.Target.Len())
		es, err := tilejob.NewEstimator(d)
		require.NoError(t, err)
		for _, size := range []int{1, kriging.EstimateChunk + 1} {
			tiles := tilejob.Tiles(e.Target.Len(), size)
			if size == 1 {
				require.Greater(t, len(tiles), 1, name)
			}
			got := make([][]float64, e.Columns())
			for _, tl := range tiles {
				require.Equal(t, 0, tl.Lo%kriging.EstimateChunk)
				cols, err := es.Estimate(context.Background(), tl.Lo, tl.Hi, nil)
				require.NoError(t, err)
				for c := range got {
					got[c] = append(got[c], cols[c]...)
				}
			}
			requireBits(t, want, got, fmt.Sprintf("%s, tiles of %d", name, tilejob.TileSize(size)))
		}
	}
}

// Runner and Handler on an embedded server: the assembled columns equal the
// single-process ones bit for bit for several tile sizes, on one and two
// compute workers, with a worker killed in the middle of a tile (the tile
// is redelivered and finished elsewhere); progress counts done tiles; the
// cluster keeps nothing of the job afterwards.
func TestRunner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	es := estimations(t)
	cases := []struct {
		name    string
		tile    int
		workers int
		kill    bool
	}{
		{"knn-grid", kriging.EstimateChunk, 1, false},
		{"knn-grid", 2 * kriging.EstimateChunk, 2, true},
		{"idw-points", kriging.EstimateChunk, 2, false},
		{"idw-points", 0, 1, false}, // one tile
		{"kriging-masked", kriging.EstimateChunk, 1, true},
		{"kriging-masked", 3 * kriging.EstimateChunk, 2, false},
		{"kriging-grid", kriging.EstimateChunk, 2, true},
	}
	for _, tc := range cases {
		e := es[tc.name]
		what := fmt.Sprintf("%s, tiles of %d, %d workers, kill %v", tc.name, tc.tile, tc.workers, tc.kill)
		var notices []string
		var noticesMu sync.Mutex
		r := &tilejob.Runner{Queue: q, TileTargets: tc.tile, Notice: func(_ context.Context, msg string) {
			noticesMu.Lock()
			notices = append(notices, msg)
			noticesMu.Unlock()
		}}
		var got [][]float64
		var last, total int
		killed, evs, err := clustertest.Run(t, ctx, q, (&tilejob.Handler{Inputs: q}).Compute, tc.workers, tc.kill, func(ctx context.Context) error {
			var err error
			got, err = r.Run(ctx, e, func(d, n int) {
				require.Greater(t, d, last)
				last, total = d, n
			})
			return err
		})
		require.NoError(t, err, what)
		tiles := tilejob.Tiles(e.Target.Len(), tc.tile)
		require.Equal(t, len(tiles), total, what)
		require.Equal(t, total, last, what)
		keys := make([]string, len(tiles))
		for i, tl := range tiles {
			keys[i] = tl.Key()
		}
		clustertest.CheckEvents(t, keys, killed, evs)
		if tc.kill {
			// The job's progress message names the lost tile and its
			// redelivery.
			want := fmt.Sprintf("shard %d of %d lost: compute worker ", slices.Index(keys, killed)+1, len(keys))
			noticesMu.Lock()
			require.True(t, slices.ContainsFunc(notices, func(m string) bool {
				return strings.HasPrefix(m, want) && strings.Contains(m, "redelivered after the 2s ack wait")
			}), "%s: notices %q", what, notices)
			noticesMu.Unlock()
		}
		requireBits(t, single(t, e), got, what)
		clustertest.RequireEmpty(t, ctx, nc)
	}
}

// Bad estimations are refused with the reason, and a kriging tile that is
// not aligned to the kriging chunks is an error rather than a value that
// could differ from the single-process one.
func TestErrors(t *testing.T) {
	es := estimations(t)
	e := *es["knn-grid"]
	e.Outputs = []string{"variance"}
	_, err := tilejob.Encode(&e)
	require.ErrorContains(t, err, "no outputs")
	e = *es["kriging-grid"]
	e.Outputs = []string{"variance", "variance"}
	_, err = tilejob.NewEstimator(&e)
	require.ErrorContains(t, err, "repeated kriging output")
	e = *es["kriging-grid"]
	e.Target.Points = []float64{1, 2, 3}
	_, err = tilejob.Encode(&e)
	require.ErrorContains(t, err, "exactly one")
	k, err := tilejob.NewEstimator(es["kriging-grid"])
	require.NoError(t, err)
	_, err = k.Estimate(context.Background(), 100, 200, nil)
	require.ErrorContains(t, err, "not aligned")
	_, err = (&tilejob.Handler{}).Compute(context.Background(), "tile-x", []byte(`{"version":1}`), "t0-1")
	require.ErrorContains(t, err, "reads no inputs")
}

// A Runner whose context ends cancels the cluster job and deletes its
// input: no compute worker runs, so the tiles stay queued until then.
func TestRunnerCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	e := estimations(t)["knn-grid"]
	r := &tilejob.Runner{Queue: q, TileTargets: 1}
	require.True(t, r.Sharded(e.Target.Len()))
	require.False(t, (&tilejob.Runner{}).Sharded(e.Target.Len()))
	clustertest.Cancel(t, ctx, q, nc, func(ctx context.Context) error {
		_, err := r.Run(ctx, e, nil)
		return err
	})
}
