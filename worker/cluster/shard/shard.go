// Package shard splits a turning-bands simulation job into shards — a range
// of realisations × a tile of target cells — computes one shard as a blob,
// and assembles the shards' blobs into the job's ensemble Parquet files tile
// by tile.
//
// A shard's blob is a pure function of the request and the shard: its
// values are those of tbsim.StreamPart, which are bit-identical to the same
// realisation and cell of the single-process simulation whatever the split
// (tbsim derives every random stream from the seed and what it belongs to:
// realisation, structure, line, point). So a shard can be computed by any
// process, any number of times, and the assembled ensemble equals the
// single-process one value for value; written with the same row-group size,
// the Parquet bytes (and so the blob key) are equal too.
//
// Tiles are runs of whole coarse rows (cells of equal j, k): a row's wanted
// span anchors the fast grid evaluation, so cutting inside a row would move
// values in their last bits.
package shard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/objects"
)

// Default shard sizes (docs: about 200 MB per shard, tiles of 128–256 MB
// of ensemble values), and the default least number of tiles.
const (
	DefaultShardBytes = 200 << 20
	DefaultTileBytes  = 256 << 20
	DefaultMinTiles   = 16
)

// minTileCells is the fewest cells MinTiles splits a tile down to: below
// it the per-shard costs (a queue round trip, a cold kriging cache) weigh.
const minTileCells = 1 << 14

// Sizes are the targets of a plan, in bytes of float64 output values (all
// outputs of a shard or a tile counted).
type Sizes struct {
	// TileBytes bounds a tile's values over all realisations: tile cells ×
	// realisations × outputs × 8 ≤ TileBytes, unless one coarse row alone is
	// larger (a tile holds at least one row).
	TileBytes int64
	// ShardBytes bounds a shard's values: tile cells × realisation range ×
	// outputs × 8 ≤ ShardBytes, unless one realisation of the tile is
	// larger (a shard holds at least one realisation).
	ShardBytes int64
	// MinTiles is the least number of tiles (default DefaultMinTiles; a
	// negative value means 1) a target of more than MinTiles × 16,384 cells
	// is split into, so that the compute workers share a job smaller than
	// TileBytes and the last shard to finish is short: tiles then hold
	// about cells / MinTiles cells (never fewer than 16,384).
	MinTiles int
}

// WithDefaults returns sz with its zero members set to the defaults: an api
// worker puts these explicit sizes in the job spec, so every worker plans
// the same shards.
func (sz Sizes) WithDefaults() Sizes {
	if sz.TileBytes <= 0 {
		sz.TileBytes = DefaultTileBytes
	}
	if sz.ShardBytes <= 0 {
		sz.ShardBytes = DefaultShardBytes
	}
	if sz.MinTiles == 0 {
		sz.MinTiles = DefaultMinTiles
	}
	return sz
}

// Shard is one piece of a job: realisations [R0, R1) of the coarse rows
// [Row0, Row1), which hold output cells [Lo, Hi).
type Shard struct {
	Index      int // position in Plan.Shards
	Tile       int // position in Plan.Tiles
	R0, R1     int
	Row0, Row1 int
	Lo, Hi     int
}

// Key names the shard; it is a valid NATS subject token sequence, key-value
// key and object name: "r<R0>-<R1>.q<Row0>-<Row1>".
func (s Shard) Key() string { return fmt.Sprintf("r%d-%d.q%d-%d", s.R0, s.R1, s.Row0, s.Row1) }

// Part is the tbsim part the shard simulates.
func (s Shard) Part() tbsim.Part { return tbsim.Part{R0: s.R0, R1: s.R1, Row0: s.Row0, Row1: s.Row1} }

// Values is the number of float64 values of each output in the shard.
func (s Shard) Values() int { return (s.Hi - s.Lo) * (s.R1 - s.R0) }

// Tile is a run of coarse rows and its shards in realisation order.
type Tile struct {
	Row0, Row1 int
	Lo, Hi     int
	Shards     []int
}

// Plan is the split of one job.
type Plan struct {
	Cells        int // output cells
	Realisations int
	Outputs      int // outputs per cell and realisation (1, or 4 with Gaussian results)
	Tiles        []Tile
	Shards       []Shard
}

// NewPlan splits a job whose coarse row q holds output cells [rowStarts[q],
// rowStarts[q+1]) (tbsim.RowStarts) into tiles and shards of the given
// sizes; zero sizes take the defaults. Empty rows join a neighbouring tile.
func NewPlan(rowStarts []int, realisations, outputs int, sz Sizes) (*Plan, error) {
	if len(rowStarts) < 2 {
		return nil, errors.New("shard: the target has no rows")
	}
	if realisations < 1 || outputs < 1 {
		return nil, fmt.Errorf("shard: %d realisations and %d outputs, want ≥ 1", realisations, outputs)
	}
	sz = sz.WithDefaults()
	rows := len(rowStarts) - 1
	cells := rowStarts[rows]
	if cells == 0 {
		return nil, errors.New("shard: the target has no cells")
	}
	perCell := int64(realisations) * int64(outputs) * 8
	tileCells := max(1, int(sz.TileBytes/perCell))
	if sz.MinTiles > 1 && cells > sz.MinTiles*minTileCells {
		// Tiles of whole rows: a tile may pass cells/MinTiles by less than
		// a row, so that no sliver is left for a last tile.
		widest := 0
		for q := 0; q < rows; q++ {
			widest = max(widest, rowStarts[q+1]-rowStarts[q])
		}
		tileCells = min(tileCells, max(minTileCells, (cells+sz.MinTiles-1)/sz.MinTiles+widest-1))
	}
	pl := &Plan{Cells: cells, Realisations: realisations, Outputs: outputs}
	for q0 := 0; q0 < rows; {
		// Grow the tile while it is empty or the next row still fits.
		q1 := q0 + 1
		for q1 < rows && (rowStarts[q1] == rowStarts[q0] || rowStarts[q1+1]-rowStarts[q0] <= tileCells) {
			q1++
		}
		if rowStarts[rows] == rowStarts[q1] {
			q1 = rows // trailing empty rows join the last tile
		}
		pl.Tiles = append(pl.Tiles, Tile{Row0: q0, Row1: q1, Lo: rowStarts[q0], Hi: rowStarts[q1]})
		q0 = q1
	}
	for ti := range pl.Tiles {
		t := &pl.Tiles[ti]
		m := int64(t.Hi - t.Lo)
		rr := max(1, int(sz.ShardBytes/(m*int64(outputs)*8)))
		for r0 := 0; r0 < realisations; r0 += rr {
			s := Shard{Index: len(pl.Shards), Tile: ti, R0: r0, R1: min(realisations, r0+rr), Row0: t.Row0, Row1: t.Row1, Lo: t.Lo, Hi: t.Hi}
			t.Shards = append(t.Shards, s.Index)
			pl.Shards = append(pl.Shards, s)
		}
	}
	return pl, nil
}

// Outputs is the number of outputs a simulation with these parameters
// produces: 4 with Gaussian results (block, block normal score, point,
// point normal score), else 1 (block).
func Outputs(p tbsim.Params) int {
	if p.SaveGaussian {
		return 4
	}
	return 1
}

// Compute simulates shard s of the job (in, p) and returns its blob: the
// outputs one after the other, each realisation-major, little-endian
// float64 — value (output o, realisation R0+r, cell Lo+c) at index
// (o·(R1−R0) + r)·(Hi−Lo) + c. p.Progress, when set, gets the shard's cells.
func Compute(ctx context.Context, in tbsim.Input, p tbsim.Params, s Shard) ([]byte, error) {
	return compute(s, Outputs(p), func(sink func(tbsim.Tile) error) error {
		_, err := tbsim.StreamPart(ctx, in, p, s.Part(), sink)
		return err
	})
}

// ComputePrepared is Compute with the shard's realisations already
// prepared (tbsim.Prepare of [s.R0, s.R1) of the job (in, p), which may
// serve any number of shards of that range): the same blob, bit for bit,
// without redoing the data residuals and the kriger. progress, when not
// nil, gets the shard's cells.
func ComputePrepared(ctx context.Context, pr *tbsim.Prepared, p tbsim.Params, s Shard, progress func(done, total int)) ([]byte, error) {
	return compute(s, Outputs(p), func(sink func(tbsim.Tile) error) error {
		_, err := pr.Stream(ctx, s.Row0, s.Row1, progress, sink)
		return err
	})
}

// compute fills the blob of shard s from the tiles that stream hands to its
// sink.
func compute(s Shard, outs int, stream func(sink func(tbsim.Tile) error) error) ([]byte, error) {
	m, rr := s.Hi-s.Lo, s.R1-s.R0
	blob := make([]byte, outs*rr*m*8)
	got := 0
	err := stream(func(t tbsim.Tile) error {
		n := t.Hi - t.Lo
		if t.Lo < s.Lo || t.Hi > s.Hi || t.Realisations != rr {
			return fmt.Errorf("shard %s: tile [%d, %d) × %d realisations outside the shard", s.Key(), t.Lo, t.Hi, t.Realisations)
		}
		for o, src := range [][]float64{t.Block, t.BlockGaussian, t.Point, t.PointGaussian}[:outs] {
			for r := 0; r < rr; r++ {
				at := ((o*rr+r)*m + t.Lo - s.Lo) * 8
				for i, v := range src[r*n : (r+1)*n] {
					binary.LittleEndian.PutUint64(blob[at+8*i:], math.Float64bits(v))
				}
			}
		}
		got += n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", s.Key(), err)
	}
	if got != m {
		return nil, fmt.Errorf("shard %s: simulated %d of %d cells", s.Key(), got, m)
	}
	return blob, nil
}

// Digest is the lowercase hex SHA-256 of a blob, the key of shard results.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Assemble writes the ensembles of a planned job into writers (one per
// output, each of Realisations float64 columns) tile by tile, in cell
// order, holding one shard's blob at a time: get returns the blob of a
// shard. A tile crossing a row-group boundary is written in segments, its
// shards fetched once per segment. The writers are not closed.
func Assemble(ctx context.Context, pl *Plan, writers []*objects.TableWriter, get func(ctx context.Context, s Shard) ([]byte, error)) error {
	if len(writers) != pl.Outputs {
		return fmt.Errorf("shard: %d writers for %d outputs", len(writers), pl.Outputs)
	}
	for _, w := range writers {
		if w.Width() != pl.Realisations {
			return fmt.Errorf("shard: a writer has %d columns for %d realisations", w.Width(), pl.Realisations)
		}
	}
	var cols, bufs [][]float64 // column buffers, reused from shard to shard
	for _, t := range pl.Tiles {
		for a := t.Lo; a < t.Hi; {
			b := min(t.Hi, a+writers[0].GroupRoom())
			for _, si := range t.Shards {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("shard: assembly stopped: %w", err)
				}
				s := pl.Shards[si]
				blob, err := get(ctx, s)
				if err != nil {
					return fmt.Errorf("shard %s: %w", s.Key(), err)
				}
				m, rr := s.Hi-s.Lo, s.R1-s.R0
				if len(blob) != pl.Outputs*rr*m*8 {
					return fmt.Errorf("shard %s: blob of %d bytes, want %d", s.Key(), len(blob), pl.Outputs*rr*m*8)
				}
				for o, w := range writers {
					cols = cols[:0]
					for r := 0; r < rr; r++ {
						at := ((o*rr+r)*m + a - s.Lo) * 8
						if r == len(bufs) {
							bufs = append(bufs, nil)
						}
						if cap(bufs[r]) < b-a {
							bufs[r] = make([]float64, b-a)
						}
						col := bufs[r][:b-a]
						for i := range col {
							col[i] = math.Float64frombits(binary.LittleEndian.Uint64(blob[at+8*i:]))
						}
						cols = append(cols, col)
					}
					if err := w.WriteFloat64ColumnsAt(s.R0, cols); err != nil {
						return fmt.Errorf("shard %s: %w", s.Key(), err)
					}
				}
			}
			a = b
		}
	}
	return nil
}

// Close closes the writers of a job (as filled by Assemble or WriteSingle)
// and returns their blobs in output order; it stops at the first error.
func Close(writers []*objects.TableWriter) ([]objects.Blob, error) {
	out := make([]objects.Blob, 0, len(writers))
	for _, w := range writers {
		b, err := w.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// WriteSingle writes the ensembles of the job (in, p) in one process, the
// way the worker's simulation task does (tbsim.Stream, one
// WriteFloat64Columns per tile): the reference the assembled files equal.
func WriteSingle(ctx context.Context, in tbsim.Input, p tbsim.Params, writers []*objects.TableWriter) error {
	if len(writers) != Outputs(p) {
		return fmt.Errorf("shard: %d writers for %d outputs", len(writers), Outputs(p))
	}
	cols := make([][]float64, p.Realisations)
	_, err := tbsim.Stream(ctx, in, p, func(tl tbsim.Tile) error {
		n := tl.Hi - tl.Lo
		for o, src := range [][]float64{tl.Block, tl.BlockGaussian, tl.Point, tl.PointGaussian}[:len(writers)] {
			for r := range cols {
				cols[r] = src[r*n : (r+1)*n]
			}
			if err := writers[o].WriteFloat64Columns(cols); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}
