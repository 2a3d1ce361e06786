// Package lwjob runs location-wise statistics of an ensemble as shards on
// the cluster queue (package cluster): one shard per tile of the ensemble
// (a block of consecutive cells for every realisation, as an ensemble
// Source yields them: a Parquet row group). Runner, on the worker that
// accepted the request, reads the ensemble a tile at a time and stores each
// tile as a job input (cluster.Queue.PutInput: an Object Store blob named by
// its SHA-256, which the spec names), then submits the job, follows it and
// assembles the statistics; Handler computes the statistics of one tile on
// a compute worker, which reads no object of the worker's store.
//
// Every location-wise statistic of a cell is a function of that cell's
// values alone, whatever the tiling and the number of goroutines
// (ensemble.LocationWise), so the assembled outputs equal those of
// ensemble.Process in one process bit for bit, whichever worker computes a
// tile and however often.
package lwjob

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/cluster"
)

// JobPrefix starts the cluster job ids of location-wise jobs (a name
// only: shards are routed by their ShardKind).
const JobPrefix = "lw-"

// ShardKind is the shard kind of location-wise jobs (cluster.SubmitKind): a
// compute worker computes their shards with a Handler.
const ShardKind = "lw"

// specVersion is the layout of the spec; a compute worker refuses others.
const specVersion = 1

// Spec is the spec of a location-wise job: the operations, the number of
// realisations and the tiles with their inputs.
type Spec struct {
	Version      int                 `json:"version"`
	Operations   ensemble.Operations `json:"operations"`
	Realisations int                 `json:"realisations"`
	Tiles        []Tile              `json:"tiles"`
}

// Tile is the tile of cells [Lo, Hi) and the SHA-256 of its input: the
// realisations one after the other, Hi − Lo little-endian float64 each.
type Tile struct {
	Lo    int    `json:"lo"`
	Hi    int    `json:"hi"`
	Input string `json:"input"`
}

// Key names the tile's shard: "c<Lo>-<Hi>".
func (t Tile) Key() string { return fmt.Sprintf("c%d-%d", t.Lo, t.Hi) }

// Inputs reads job inputs; *cluster.Queue implements it.
type Inputs interface {
	Input(ctx context.Context, job, digest string, buf []byte) ([]byte, error)
}

// Handler computes the statistics of tiles on a compute worker. It keeps
// the decoded spec of the last job it saw (a job's shards come one after
// the other, and a large job's spec lists thousands of tiles) and is safe
// for concurrent use.
type Handler struct {
	// Inputs reads the tiles (the worker's queue).
	Inputs Inputs

	mu   sync.Mutex
	job  string
	last *decoded
}

// decoded is a job's spec with its tiles by shard key.
type decoded struct {
	Spec
	tiles map[string]Tile
}

// decode returns the decoded spec of job, decoding raw unless it is the
// last job's.
func (h *Handler) decode(job string, raw json.RawMessage) (*decoded, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last != nil && h.job == job {
		return h.last, nil
	}
	d := &decoded{}
	if err := json.Unmarshal(raw, &d.Spec); err != nil {
		return nil, fmt.Errorf("lwjob: spec: %w", err)
	}
	if d.Version != specVersion {
		return nil, fmt.Errorf("lwjob: spec version %d, this worker reads %d", d.Version, specVersion)
	}
	d.tiles = make(map[string]Tile, len(d.Tiles))
	for _, t := range d.Tiles {
		d.tiles[t.Key()] = t
	}
	h.job, h.last = job, d
	return d, nil
}

// tile returns the decoded spec of job and its tile named key.
func (h *Handler) tile(job string, raw json.RawMessage, key string) (*decoded, Tile, error) {
	d, err := h.decode(job, raw)
	if err != nil {
		return nil, Tile{}, err
	}
	t, ok := d.tiles[key]
	if !ok {
		return nil, Tile{}, fmt.Errorf("lwjob: job %s has no tile %q", job, key)
	}
	return d, t, nil
}

// Compute is a cluster.Handler: it computes the statistics of the tile
// named key and returns the outputs (in ensemble.LocationWise.Outputs
// order) one after the other, Hi − Lo little-endian float64 each.
func (h *Handler) Compute(ctx context.Context, job string, raw json.RawMessage, key string) ([]byte, error) {
	if h.Inputs == nil {
		return nil, errors.New("lwjob: the handler reads no inputs")
	}
	d, t, err := h.tile(job, raw, key)
	if err != nil {
		return nil, err
	}
	b, err := h.Inputs.Input(ctx, job, t.Input, nil)
	if err != nil {
		return nil, err
	}
	outs, err := Statistics(ctx, d.Operations, d.Realisations, t.Hi-t.Lo, b)
	if err != nil {
		return nil, fmt.Errorf("lwjob: tile %s: %w", key, err)
	}
	return outs, nil
}

// Estimate is a cluster.Estimator: the memory computing the tile named key
// needs, its input twice (the blob and its decoded columns) and its outputs
// twice (the statistics and their encoding).
func (h *Handler) Estimate(_ context.Context, job string, raw json.RawMessage, key string) (int64, error) {
	d, t, err := h.tile(job, raw, key)
	if err != nil {
		return 0, err
	}
	outputs := len(d.Operations.Quantiles) + len(d.Operations.ProbabilityAbove) + len(d.Operations.MeanAbove)
	if d.Operations.Summary {
		outputs += 4
	}
	n := int64(t.Hi - t.Lo)
	return 2*8*n*int64(d.Realisations) + 2*8*n*int64(outputs), nil
}

// Statistics computes the location-wise statistics ops of a tile of n
// cells and r realisations held as encoded by EncodeTile, and returns them
// encoded the same way (one column per output).
func Statistics(ctx context.Context, ops ensemble.Operations, r, n int, tile []byte) ([]byte, error) {
	if r < 1 || len(tile) != 8*r*n {
		return nil, fmt.Errorf("input of %d bytes for %d cells × %d realisations", len(tile), n, r)
	}
	cols := decodeColumns(tile, r, n)
	lw, err := ensemble.NewLocationWise(ops, n, r)
	if err != nil {
		return nil, err
	}
	if err := ensemble.ProcessTile(ctx, ensemble.Tile{Lo: 0, Columns: cols}, lw); err != nil {
		return nil, err
	}
	var out []byte
	for _, o := range lw.Outputs() {
		out = appendColumn(out, o.Values)
	}
	return out, nil
}

// EncodeTile is the input of a tile: its columns one after the other,
// little-endian float64, appended to dst.
func EncodeTile(dst []byte, t ensemble.Tile) []byte {
	for _, c := range t.Columns {
		dst = appendColumn(dst, c)
	}
	return dst
}

func appendColumn(dst []byte, c []float64) []byte {
	for _, v := range c {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	}
	return dst
}

func decodeColumns(b []byte, r, n int) [][]float64 {
	cols := make([][]float64, r)
	vals := make([]float64, r*n)
	for i := range vals {
		vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	for c := range cols {
		cols[c] = vals[c*n : (c+1)*n]
	}
	return cols
}

// Runner runs location-wise statistics as cluster jobs from the worker that
// accepted them.
type Runner struct {
	Queue *cluster.Queue
	// Cells is the number of cells above which an ensemble's statistics
	// run as shards, and the largest tile the api worker should read the
	// ensemble in (0: DefaultCells).
	Cells int
	// Notice, when not nil, gets what the job's progress message should
	// say while it waits on its shards: a shard lost by a compute worker
	// that went silent, and when it is redelivered (cluster.Queue.Follow).
	// ctx is the one given to Run (the job's).
	Notice func(ctx context.Context, msg string)
}

// notice is r.Notice for the run of ctx, or nil.
func (r *Runner) notice(ctx context.Context) func(string) {
	if r.Notice == nil {
		return nil
	}
	return func(msg string) { r.Notice(ctx, msg) }
}

// DefaultCells is the default Runner.Cells.
const DefaultCells = 1 << 20

// TileCells is Runner.Cells or its default.
func (r *Runner) TileCells() int {
	if r.Cells <= 0 {
		return DefaultCells
	}
	return r.Cells
}

// Sharded reports whether the statistics of an ensemble of n cells run as
// shards: more than TileCells.
func (r *Runner) Sharded(n int) bool { return n > r.TileCells() }

// Run computes the statistics ops of the ensemble src on the cluster and
// returns them as ensemble.LocationWise.Outputs does, bit-identical to
// ensemble.Process over src in one process. It reads src a tile at a time
// and stores each as a job input, then submits one shard per tile.
// progress, when not nil, gets a fraction done/total: the cells stored (the
// first half), then the shards done (the second). When ctx ends the cluster job is cancelled. When Run returns, the
// job's inputs, shard results and records are deleted from the cluster.
func (r *Runner) Run(ctx context.Context, ops ensemble.Operations, src ensemble.Source, progress func(done, total int)) (outs []ensemble.Output, err error) {
	cells, reals := src.Cells(), src.Realisations()
	lw, err := ensemble.NewLocationWise(ops, cells, reals)
	if err != nil {
		return nil, err
	}
	job, err := cluster.JobName(ctx, JobPrefix)
	if err != nil {
		return nil, err
	}
	sp := Spec{Version: specVersion, Operations: ops, Realisations: reals}
	// A failed cleanup is logged and counted, never the job's outcome.
	defer func() {
		inputs := make([]string, len(sp.Tiles))
		for i, t := range sp.Tiles {
			inputs[i] = t.Input
		}
		r.Queue.Cleanup(ctx, job, inputs...)
	}()
	// Store the tiles; their number is known once the source is read.
	report := func(done, total int) {
		if progress != nil {
			progress(done, total)
		}
	}
	buf := make([][]float64, reals)
	for i := range buf {
		buf[i] = make([]float64, src.MaxTile())
	}
	var enc []byte
	next := 0
	for {
		t, err := src.ReadTile(ctx, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if t.Lo != next || t.Len() == 0 {
			return nil, fmt.Errorf("lwjob: the source gave cells [%d, %d) after %d", t.Lo, t.Lo+t.Len(), next)
		}
		enc = EncodeTile(enc[:0], t)
		digest, err := r.Queue.PutInput(ctx, job, enc)
		if err != nil {
			return nil, err
		}
		sp.Tiles = append(sp.Tiles, Tile{Lo: t.Lo, Hi: t.Lo + t.Len(), Input: digest})
		next = t.Lo + t.Len()
		report(next, 2*cells)
	}
	if next != cells {
		return nil, fmt.Errorf("lwjob: the source gave %d of %d cells", next, cells)
	}
	enc = nil
	raw, err := json.Marshal(sp)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(sp.Tiles))
	for i, t := range sp.Tiles {
		keys[i] = t.Key()
	}
	if err := r.Queue.SubmitFollow(ctx, ShardKind, job, raw, keys, func(done, total int) { report(total+done, 2*total) }, r.notice(ctx)); err != nil {
		return nil, err
	}
	outs = lw.Outputs()
	var res []byte
	for _, t := range sp.Tiles {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("lwjob: assembly stopped: %w", err)
		}
		if res, err = r.Queue.ResultInto(ctx, job, t.Key(), res); err != nil {
			return nil, err
		}
		m := t.Hi - t.Lo
		if len(res) != 8*m*len(outs) {
			return nil, fmt.Errorf("lwjob: tile %s: result of %d bytes, want %d", t.Key(), len(res), 8*m*len(outs))
		}
		for o, out := range outs {
			for i := range m {
				out.Values[t.Lo+i] = math.Float64frombits(binary.LittleEndian.Uint64(res[8*(o*m+i):]))
			}
		}
	}
	return outs, nil
}
