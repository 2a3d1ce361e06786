package tasks

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/objects"
)

// consimOutputs computes consim's post-processing as the simulation hands
// over its tiles, and streams every output into its blob, so that the job
// holds a tile of outputs and a row group per output, never a column of
// every cell: the location-wise statistics (one float64 column per blob, the
// blobs storeOutputs writes) and the loss classification's keys (the data
// blob of storeCategory).
//
// The reducers are sized to the largest tile seen and reused, tile cell i
// at reducer cell i, with one TileProcessor (whose working buffers are kept
// from tile to tile): LocationWise.Reset clears them before each tile, and
// every output of a cell depends on that cell's values alone, so the values
// are those of reducers over every cell. A TableWriter cuts its pages and
// row groups at the same rows whatever the blocks it is given, so the blobs
// are byte for byte those of the columns written whole. Cells no tile
// covers get NaN statistics and no category.
type consimOutputs struct {
	ops   ensemble.Operations
	econ  *ensemble.Economics
	cells int
	reals int
	// size is the number of cells the reducers hold.
	size int
	lw   *ensemble.LocationWise
	cls  *ensemble.Classifier
	proc *ensemble.TileProcessor
	// outs are lw's outputs, their Values size long.
	outs []ensemble.Output
	// stats are the statistics' blobs, in outs' order; keys is the
	// classification's (nil without one).
	stats []*streamBlob
	keys  *streamBlob
	// next is the first cell not written yet.
	next int
	k64  []int64
	cols [][]float64
	// nan and none are NaN statistics and no categories for missing.
	nan  []float64
	none []int32
}

// newConsimOutputs opens the blobs of the statistics ops (and, with econ, of
// the keys of the loss classification) of an
// ensemble of cells cells and reals realisations in workspace (org, ws).
// The caller calls abort when it does not reach finish.
func newConsimOutputs(ctx context.Context, env *Env, org, ws string, ops ensemble.Operations, econ *ensemble.Economics, cells, reals int) (*consimOutputs, error) {
	o := &consimOutputs{ops: ops, econ: econ, cells: cells, reals: reals}
	if err := o.grow(ctx, 0); err != nil {
		return nil, err
	}
	for range o.outs {
		b, err := openBlob(ctx, env, org, ws, objects.Float64Types(1), []string{valuesColumn})
		if err != nil {
			o.abort()
			return nil, err
		}
		o.stats = append(o.stats, b)
	}
	if econ != nil {
		b, err := openBlob(ctx, env, org, ws, []objects.DataType{objects.TypeInt32}, []string{valuesColumn})
		if err != nil {
			o.abort()
			return nil, err
		}
		o.keys = b
	}
	return o, nil
}

// grow makes reducers of n cells and their processor.
func (o *consimOutputs) grow(ctx context.Context, n int) error {
	lw, err := ensemble.NewLocationWise(o.ops, n, o.reals)
	if err != nil {
		return err
	}
	rs := []ensemble.Reducer{lw}
	if o.econ != nil {
		if o.cls, err = ensemble.NewClassifier(ensemble.MinimiseLoss, *o.econ, n, o.reals); err != nil {
			return err
		}
		rs = append(rs, o.cls)
	}
	if o.proc, err = ensemble.NewTileProcessor(ctx, rs...); err != nil {
		return err
	}
	o.lw, o.outs, o.size = lw, lw.Outputs(), n
	return nil
}

// tile computes the outputs of a finished simulation tile and writes them.
func (o *consimOutputs) tile(ctx context.Context, t tbsim.Tile) error {
	n := t.Hi - t.Lo
	if t.Lo < o.next || t.Hi > o.cells || n < 0 {
		return fmt.Errorf("consim: tile [%d, %d) after cell %d of %d", t.Lo, t.Hi, o.next, o.cells)
	}
	if err := o.missing(t.Lo); err != nil {
		return err
	}
	if n > o.size {
		if err := o.grow(ctx, n); err != nil {
			return err
		}
	}
	o.lw.Reset()
	if err := o.proc.Process(ctx, ensemble.TileFromFlat(0, n, t.Realisations, t.Block, o.cols)); err != nil {
		return err
	}
	var keys []int32
	if o.cls != nil {
		keys = o.cls.Keys()[:n]
	}
	if err := o.write(func(i int) []float64 { return o.outs[i].Values[:n] }, keys); err != nil {
		return err
	}
	o.next = t.Hi
	return nil
}

// write appends rows to the blobs: stat(i) to statistic i's and keys (when
// there is a classification) to the categories'.
func (o *consimOutputs) write(stat func(i int) []float64, keys []int32) error {
	for i, b := range o.stats {
		if err := b.tw.WriteFloat64Columns([][]float64{stat(i)}); err != nil {
			return fmt.Errorf("writing %s: %w", o.outs[i].Name, err)
		}
	}
	if o.keys == nil {
		return nil
	}
	o.k64 = o.k64[:0]
	for _, k := range keys {
		o.k64 = append(o.k64, int64(k))
	}
	if err := o.keys.tw.WriteColumns([]objects.Column{{Type: objects.TypeInt32, Int64: o.k64}}); err != nil {
		return fmt.Errorf("writing the categories: %w", err)
	}
	return nil
}

// missing writes the outputs of cells [o.next, to), which no tile covers:
// NaN statistics and no category.
func (o *consimOutputs) missing(to int) error {
	for o.next < to {
		if o.nan == nil {
			o.nan, o.none = make([]float64, 8192), make([]int32, 8192)
			for i := range o.nan {
				o.nan[i], o.none[i] = math.NaN(), ensemble.NoCategory
			}
		}
		m := min(to-o.next, len(o.nan))
		if err := o.write(func(int) []float64 { return o.nan[:m] }, o.none[:m]); err != nil {
			return err
		}
		o.next += m
	}
	return nil
}

// finish writes the cells no tile covered, stores the blobs and returns the
// statistics' attribute writes (as storeOutputs makes them) and the key of
// the categories' blob ("" without a classification).
func (o *consimOutputs) finish(ctx context.Context) ([]attributeWrite, string, error) {
	if err := o.missing(o.cells); err != nil {
		return nil, "", err
	}
	writes := make([]attributeWrite, len(o.stats))
	for i, b := range o.stats {
		key, err := b.commit(ctx)
		if err != nil {
			return nil, "", err
		}
		writes[i] = statisticWrite(o.outs[i].Name, key, o.cells)
	}
	var keys string
	if o.keys != nil {
		var err error
		if keys, err = o.keys.commit(ctx); err != nil {
			return nil, "", err
		}
	}
	return writes, keys, nil
}

// abort drops every blob not stored yet.
func (o *consimOutputs) abort() {
	for _, b := range o.stats {
		b.abort()
	}
	o.keys.abort()
}
