package shard

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testJob is a small conditional simulation on a masked, filtered grid with
// block discretisation, ordinary kriging and Gaussian outputs.
func testJob(t testing.TB) (tbsim.Input, tbsim.Params) {
	spec := synthetic.Simulation(synthetic.Small, synthetic.DefaultSeed)
	spec.GridSize = [3]int{16, 11, 7}
	c, err := synthetic.New(spec)
	require.NoError(t, err)
	m, err := c.Masked()
	require.NoError(t, err)
	filter := make([]bool, m.NumActive())
	for a := range filter {
		filter[a] = a%13 != 4
	}
	p := tbsim.DefaultParams()
	p.Realisations = 5
	p.Lines = 40
	p.Method = kriging.Ordinary
	p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 1, NZ: 2}
	p.SaveGaussian = true
	return tbsim.Input{Masked: m, Filter: filter, Coords: c.Coords, Values: c.Grades, Variogram: c.Variogram, Distribution: c.Distribution}, p
}

// testGroupRows is a row-group size small enough that tiles cross row-group
// boundaries.
const testGroupRows = 150

// newWriters opens one ensemble writer per output into buffers.
func newWriters(t testing.TB, outputs, realisations int) ([]*objects.TableWriter, []*bytes.Buffer) {
	var ws []*objects.TableWriter
	var bufs []*bytes.Buffer
	for o := 0; o < outputs; o++ {
		var b bytes.Buffer
		w, err := objects.NewTableWriter(&b, objects.Float64Types(realisations), objects.EnsembleColumnNames("v", realisations), &objects.WriteOptions{RowGroupRows: testGroupRows})
		require.NoError(t, err)
		ws, bufs = append(ws, w), append(bufs, &b)
	}
	return ws, bufs
}

// singleProcess writes the ensembles the way the worker's simulation task
// does: tbsim.Stream, one WriteFloat64Columns per tile.
func singleProcess(t testing.TB, in tbsim.Input, p tbsim.Params) []objects.Blob {
	ws, _ := newWriters(t, Outputs(p), p.Realisations)
	require.NoError(t, WriteSingle(context.Background(), in, p, ws))
	out, err := Close(ws)
	require.NoError(t, err)
	return out
}

// Shards of several sizes, computed in a shuffled order with one shard
// computed twice, assemble into Parquet files whose bytes (SHA-256 keys)
// equal the single-process files: the ensemble is bit-identical.
func TestAssembledEqualsSingleProcess(t *testing.T) {
	in, p := testJob(t)
	want := singleProcess(t, in, p)
	starts, err := tbsim.RowStarts(in)
	require.NoError(t, err)
	outs := Outputs(p)
	perCell := int64(p.Realisations * outs * 8)
	for _, sz := range []Sizes{
		{TileBytes: 1, ShardBytes: 1},                           // one row per tile, one realisation per shard
		{TileBytes: 40 * perCell, ShardBytes: 40 * 2 * 8 * 4},   // ~40 cells per tile, 2 realisations per shard
		{TileBytes: 300 * perCell, ShardBytes: 300 * 3 * 8 * 4}, // tiles crossing row groups, ranges of 3 and 2
		{}, // defaults: one shard
	} {
		pl, err := NewPlan(starts, p.Realisations, outs, sz)
		require.NoError(t, err)
		covered := 0
		for _, tl := range pl.Tiles {
			require.Equal(t, covered, tl.Lo)
			covered = tl.Hi
		}
		require.Equal(t, pl.Cells, covered)
		order := rand.New(rand.NewPCG(uint64(len(pl.Shards)), 7)).Perm(len(pl.Shards))
		order = append(order, order[0])
		blobs := map[string][]byte{}
		for _, i := range order {
			s := pl.Shards[i]
			b, err := Compute(context.Background(), in, p, s)
			require.NoError(t, err)
			if prev, ok := blobs[s.Key()]; ok {
				require.Equal(t, Digest(prev), Digest(b), "shard %s computed twice", s.Key())
			}
			blobs[s.Key()] = b
		}
		ws, _ := newWriters(t, outs, p.Realisations)
		gets := 0
		err = Assemble(context.Background(), pl, ws, func(_ context.Context, s Shard) ([]byte, error) {
			gets++
			return blobs[s.Key()], nil
		})
		require.NoError(t, err)
		require.GreaterOrEqual(t, gets, len(pl.Shards))
		for o, w := range ws {
			b, err := w.Close()
			require.NoError(t, err)
			require.Equal(t, want[o], b, "sizes %+v (%d tiles, %d shards): output %d", sz, len(pl.Tiles), len(pl.Shards), o)
		}
		t.Logf("sizes %+v: %d tiles, %d shards, %d blob reads", sz, len(pl.Tiles), len(pl.Shards), gets)
	}
}

// Every cell and realisation belongs to exactly one shard, and shard sizes
// respect the targets.
func TestPlanCovers(t *testing.T) {
	starts := []int{0, 0, 5, 5, 12, 20, 20, 20} // empty rows inside, first and last
	for _, sz := range []Sizes{{TileBytes: 1, ShardBytes: 1}, {TileBytes: 8 * 8 * 3, ShardBytes: 8 * 8 * 2}, {}} {
		pl, err := NewPlan(starts, 3, 1, sz)
		require.NoError(t, err)
		seen := make([]int, 20*3)
		for _, s := range pl.Shards {
			require.Less(t, s.Lo, s.Hi, "empty shard %+v", s)
			require.Equal(t, pl.Tiles[s.Tile].Lo, s.Lo)
			for c := s.Lo; c < s.Hi; c++ {
				for r := s.R0; r < s.R1; r++ {
					seen[c+r*20]++
				}
			}
		}
		for i, n := range seen {
			require.Equal(t, 1, n, "sizes %+v: value %d covered %d times", sz, i, n)
		}
		require.Equal(t, 0, pl.Tiles[0].Row0)
		require.Equal(t, 7, pl.Tiles[len(pl.Tiles)-1].Row1)
	}
	_, err := NewPlan([]int{0, 0}, 1, 1, Sizes{})
	require.ErrorContains(t, err, "no cells")
}

// A blob of the wrong length stops the assembly with the shard named.
func TestAssembleRejectsBadBlob(t *testing.T) {
	pl, err := NewPlan([]int{0, 4, 8}, 2, 1, Sizes{TileBytes: 1, ShardBytes: 1})
	require.NoError(t, err)
	ws, _ := newWriters(t, 1, 2)
	err = Assemble(context.Background(), pl, ws, func(_ context.Context, s Shard) ([]byte, error) { return make([]byte, 8), nil })
	require.ErrorContains(t, err, "shard r0-1.q0-1: blob of 8 bytes, want 32")
}

// With the default sizes a target smaller than one tile of bytes is still
// split into DefaultMinTiles tiles of whole rows, as even as rows allow; a
// small target (at most 16 × 16,384 cells) and MinTiles −1 keep one tile.
func TestPlanMinTiles(t *testing.T) {
	rowsOf := func(rows, width int) []int {
		starts := make([]int, rows+1)
		for q := range starts {
			starts[q] = q * width
		}
		return starts
	}
	pl, err := NewPlan(rowsOf(5000, 200), 10, 1, Sizes{})
	require.NoError(t, err)
	require.Len(t, pl.Tiles, DefaultMinTiles)
	require.Len(t, pl.Shards, DefaultMinTiles, "10 realisations of a tile fit a shard")
	for _, tl := range pl.Tiles[:len(pl.Tiles)-1] {
		assert.Equal(t, 313*200, tl.Hi-tl.Lo, "ceil(1e6/16) = 62,500 cells, plus less than a row")
	}
	assert.Equal(t, 1_000_000-15*313*200, pl.Tiles[15].Hi-pl.Tiles[15].Lo, "the last tile is the smallest")

	pl, err = NewPlan(rowsOf(5000, 200), 10, 1, Sizes{MinTiles: 5})
	require.NoError(t, err)
	assert.Len(t, pl.Tiles, 5)
	pl, err = NewPlan(rowsOf(5000, 200), 10, 1, Sizes{MinTiles: -1})
	require.NoError(t, err)
	assert.Len(t, pl.Tiles, 1)
	pl, err = NewPlan(rowsOf(1000, 200), 10, 1, Sizes{}) // 200,000 cells ≤ 16 × 16,384
	require.NoError(t, err)
	assert.Len(t, pl.Tiles, 1)
	// TileBytes still bounds a tile when it gives more tiles.
	pl, err = NewPlan(rowsOf(5000, 200), 10, 1, Sizes{TileBytes: 200 * 10 * 8 * 100})
	require.NoError(t, err)
	assert.Len(t, pl.Tiles, 50)
}
