package ensemble

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingSource counts the calls of ReadTile and records the largest
// buffer it was given and whether two calls ever overlapped.
type countingSource struct {
	Source
	calls, active atomic.Int32
	overlapped    atomic.Bool
	maxDst        atomic.Int64
	failAt        int // fail the call with this number (1-based), 0: never
}

func (c *countingSource) ReadTile(ctx context.Context, dst [][]float64) (Tile, error) {
	if c.active.Add(1) > 1 {
		c.overlapped.Store(true)
	}
	defer c.active.Add(-1)
	n := c.calls.Add(1)
	if l := int64(len(dst[0])); l > c.maxDst.Load() {
		c.maxDst.Store(l)
	}
	if c.failAt > 0 && int(n) == c.failAt {
		return Tile{}, errors.New("disk on fire")
	}
	return c.Source.ReadTile(ctx, dst)
}

// A source whose tiles are larger than Process's pieces is read in pieces
// of readCells cells, one call at a time, and gives the statistics of one
// ProcessTile over the whole ensemble, bit for bit.
func TestProcessReadsInPieces(t *testing.T) {
	const cells, R = 2500, 1000 // pieces of 256 cells
	piece := readCells(R, 1<<30, cells)
	require.Equal(t, 256, piece)
	cols := randomEnsemble(5, cells, R)
	ops := Operations{Summary: true, Quantiles: []float64{0.1, 0.5, 0.9}, ProbabilityAbove: []float64{1, 3}, MeanAbove: []float64{1, 3}}
	whole, err := NewLocationWise(ops, cells, R)
	require.NoError(t, err)
	require.NoError(t, ProcessTile(context.Background(), Tile{Columns: cols}, whole))
	src := &countingSource{Source: NewColumnsSource(cols, 1<<30)}
	l, err := NewLocationWise(ops, cells, R)
	require.NoError(t, err)
	var done []int
	require.NoError(t, ProcessWithProgress(context.Background(), src, func(d, total int) {
		require.Equal(t, cells, total)
		done = append(done, d)
	}, l))
	var wantDone []int
	for d := piece; d < cells; d += piece {
		wantDone = append(wantDone, d)
	}
	wantDone = append(wantDone, cells)
	require.Equal(t, wantDone, done)
	require.EqualValues(t, len(wantDone)+1, src.calls.Load()) // the pieces and io.EOF
	require.EqualValues(t, piece, src.maxDst.Load())
	require.False(t, src.overlapped.Load())
	want, got := whole.Outputs(), l.Outputs()
	for k := range want {
		for i := range want[k].Values {
			require.Equal(t, math.Float64bits(want[k].Values[i]), math.Float64bits(got[k].Values[i]), "%s cell %d", want[k].Name, i)
		}
	}
}

// A read error met by the reading goroutine is returned with the cell it
// was reading, and Process returns only once that goroutine has stopped
// calling the source.
func TestProcessReadError(t *testing.T) {
	const cells, R = 2500, 1000
	cols := randomEnsemble(6, cells, R)
	src := &countingSource{Source: NewColumnsSource(cols, 1<<30), failAt: 2}
	l, err := NewLocationWise(Operations{Summary: true}, cells, R)
	require.NoError(t, err)
	err = Process(context.Background(), src, l)
	require.ErrorContains(t, err, "reading the tile at cell 256: disk on fire")
	calls := src.calls.Load()
	require.EqualValues(t, 2, calls)
	require.EqualValues(t, 0, src.active.Load())
}

// Cancelling while the statistics run stops Process with the context's
// error; the reading goroutine has stopped when it returns.
func TestProcessCancelledWhileRunning(t *testing.T) {
	const cells, R = 2500, 1000
	cols := randomEnsemble(7, cells, R)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &countingSource{Source: NewColumnsSource(cols, 1<<30)}
	l, err := NewLocationWise(Operations{Summary: true}, cells, R)
	require.NoError(t, err)
	err = ProcessWithProgress(ctx, src, func(done, _ int) {
		if done == 256 {
			cancel()
		}
	}, l)
	require.ErrorIs(t, err, context.Canceled)
	require.EqualValues(t, 0, src.active.Load())
}

// Process's pieces: about 2¹⁸ values in whole chunks of cells, at most the
// source's tile and the ensemble.
func TestReadCellsAndBufferBytes(t *testing.T) {
	require.Equal(t, 8*327, readCells(100, 131072, 1_000_000))  // chunks of 327 cells
	require.Equal(t, 131072, readCells(1, 131072, 1_000_000))   // the row group
	require.Equal(t, 77, readCells(100, 131072, 77))            // the ensemble
	require.Equal(t, 16, readCells(100_000, 131072, 1_000_000)) // one chunk of 16 cells
	// 32 MiB of pieces, between 2 and 16, at most the ensemble's pieces:
	// 16 pieces of 2,092,800 bytes, 8 of 1 MiB (the ensemble's 7.6, not
	// 32), 2 of 12.8 MB (not 2.6), 8 for 20,000 cells (7.6 pieces of 2616
	// cells), 2 for one piece.
	require.Equal(t, 16*8*8*327*100, BufferBytes(1_000_000, 100, 131072))
	require.Equal(t, 8*8*131072, BufferBytes(1_000_000, 1, 131072))
	require.Equal(t, 2*8*16*100_000, BufferBytes(1_000_000, 100_000, 131072))
	require.Equal(t, 8*8*8*327*100, BufferBytes(20_000, 100, 131072))
	require.Equal(t, 2*8*77*100, BufferBytes(77, 100, 131072))
}
