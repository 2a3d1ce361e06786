// Package tilejob runs a knn, idw or kriging estimate as shards on the
// cluster queue (package cluster): each shard estimates one tile of
// consecutive targets (cells in the target's row order, or points in their
// order). Encode turns an estimation into a self-contained input, Handler
// computes a tile on a compute worker, and Runner submits a job, follows it
// and assembles the tiles into the estimate's columns on the worker that
// accepted the request.
//
// A tile's values are bit-identical to the same targets of the estimate
// computed in one process, whatever the split: the neighbour search of knn
// and idw is a function of the target alone (neighbor.Searcher.Search), and
// kriging.Kriger.Estimate restarts its state every kriging.EstimateChunk
// targets, so tiles are multiples of it. A shard is therefore a pure
// function of the estimation and its key, and may be computed by any
// process, any number of times.
//
// The estimation (source data, neighbourhood, variogram, target geometry:
// a grid definition or point coordinates) is too large for a spec (one NATS
// message) when the data or a point target are large, so it travels as a
// job input (cluster.Queue.PutInput): a blob in the Object Store named by
// its SHA-256, which the spec names. Floating-point values travel as their
// IEEE bits (gob), so a compute worker estimates exactly the inputs the api
// worker read.
package tilejob

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster"
)

// JobPrefix starts the cluster job ids of estimation jobs (a name only:
// shards are routed by their ShardKind).
const JobPrefix = "tile-"

// ShardKind is the shard kind of estimation jobs (cluster.SubmitKind): a compute
// worker computes their shards with a Handler.
const ShardKind = "tile"

// DefaultTileTargets is the default number of targets of a tile (256
// kriging chunks, 1,048,576 targets).
const DefaultTileTargets = 256 * kriging.EstimateChunk

// Kind is the estimator.
type Kind string

// The estimators.
const (
	// KNN is the mean of the neighbours (neighbor.Index.Mean).
	KNN Kind = "knn"
	// IDW is the inverse-distance-weighted mean (neighbor.Index.IDW).
	IDW Kind = "idw"
	// Kriging is simple or ordinary kriging (kriging.Kriger.Estimate).
	Kriging Kind = "kriging"
)

// Diagnostics of kriging, in the order of kriging.Output after the
// estimate.
var Diagnostics = []string{"variance", "samples", "mean_distance", "slope", "efficiency"}

// Target is where an estimation estimates: exactly one of Grid (every cell
// centre, x fastest: grid.Grid.CellCentres), Masked (the active cells'
// centres: grid.Masked.ActiveCentres) and Points (flat x, y, z).
type Target struct {
	Grid   *grid.Grid
	Masked *grid.Masked
	Points []float64
}

// Len is the number of targets.
func (t Target) Len() int {
	switch {
	case t.Masked != nil:
		return t.Masked.NumActive()
	case t.Grid != nil:
		return t.Grid.NumCells()
	}
	return len(t.Points) / 3
}

// Coords writes the coordinates of targets [lo, hi) into dst (grown when
// too short) and returns it: the values the whole target's CellCentres,
// ActiveCentres or Points hold for them.
func (t Target) Coords(lo, hi int, dst []float64) []float64 {
	if cap(dst) < 3*(hi-lo) {
		dst = make([]float64, 3*(hi-lo))
	}
	dst = dst[:3*(hi-lo)]
	switch {
	case t.Masked != nil:
		active := t.Masked.ActiveCells()
		for a := lo; a < hi; a++ {
			p := t.Masked.CellCentre(t.Masked.IJK(active[a]))
			copy(dst[3*(a-lo):], p[:])
		}
	case t.Grid != nil:
		for c := lo; c < hi; c++ {
			p := t.Grid.CellCentre(t.Grid.IJK(c))
			copy(dst[3*(c-lo):], p[:])
		}
	default:
		copy(dst, t.Points[3*lo:3*hi])
	}
	return dst
}

// Estimation is one estimate: the source data, the estimator and its
// parameters, and the target.
type Estimation struct {
	Kind Kind
	// Coords and Values are the source data (flat x, y, z; one value per
	// datum, NaN for a datum not used), as the single-process task gives
	// them to neighbor.NewIndex or kriging.New.
	Coords, Values []float64
	// Search is the neighbourhood of KNN and IDW.
	Search neighbor.Params
	// Power is the exponent of IDW.
	Power float64
	// Kriging holds the parameters of Kriging (Variogram required; its
	// Search is the neighbourhood).
	Kriging kriging.Params
	// Outputs are the kriging diagnostics computed after the estimate,
	// names from Diagnostics (nil for KNN and IDW).
	Outputs []string
	Target  Target
}

// Columns is the number of output columns: the estimate and the outputs.
func (e *Estimation) Columns() int { return 1 + len(e.Outputs) }

func (e *Estimation) check() error {
	switch e.Kind {
	case KNN, IDW:
		if len(e.Outputs) > 0 {
			return fmt.Errorf("tilejob: %s has no outputs beside the estimate", e.Kind)
		}
	case Kriging:
		if e.Kriging.Variogram == nil {
			return errors.New("tilejob: kriging without a variogram")
		}
		seen := map[string]bool{}
		for _, o := range e.Outputs {
			ok := false
			for _, d := range Diagnostics {
				ok = ok || o == d
			}
			if !ok || seen[o] {
				return fmt.Errorf("tilejob: unknown or repeated kriging output %q", o)
			}
			seen[o] = true
		}
	default:
		return fmt.Errorf("tilejob: unknown estimator %q", e.Kind)
	}
	n := 0
	for _, set := range []bool{e.Target.Grid != nil, e.Target.Masked != nil, e.Target.Points != nil} {
		if set {
			n++
		}
	}
	if n != 1 || len(e.Target.Points)%3 != 0 {
		return errors.New("tilejob: the target needs exactly one of a grid, a masked grid and point coordinates")
	}
	if len(e.Coords) != 3*len(e.Values) {
		return fmt.Errorf("tilejob: %d source coordinates for %d values", len(e.Coords), len(e.Values))
	}
	return nil
}

// Estimator is a prepared estimation: the neighbour index or the kriger
// built once, then any tile estimated from it. It is safe for concurrent
// use.
type Estimator struct {
	e  *Estimation
	ix *neighbor.Index
	k  *kriging.Kriger
}

// NewEstimator prepares e with the same library calls as the single-process
// tasks: neighbor.NewIndex(Coords, Values, nil, Search) for KNN and IDW,
// kriging.New(Coords, Values, Kriging) for Kriging.
func NewEstimator(e *Estimation) (*Estimator, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	es := &Estimator{e: e}
	var err error
	if e.Kind == Kriging {
		es.k, err = kriging.New(e.Coords, e.Values, e.Kriging)
	} else {
		es.ix, err = neighbor.NewIndex(e.Coords, e.Values, nil, e.Search)
	}
	if err != nil {
		return nil, fmt.Errorf("tilejob: %s: %w", e.Kind, err)
	}
	return es, nil
}

// Estimate estimates targets [lo, hi) and returns the columns (estimate,
// then the outputs), each of hi − lo values, on geostat.Workers(ctx)
// goroutines. For Kriging, lo must be a multiple of kriging.EstimateChunk
// and hi one too or the number of targets, for the values to equal those of
// the whole estimate. progress, when not nil, gets the targets done and
// hi − lo.
func (es *Estimator) Estimate(ctx context.Context, lo, hi int, progress func(done, total int)) ([][]float64, error) {
	e := es.e
	if lo < 0 || hi > e.Target.Len() || lo > hi {
		return nil, fmt.Errorf("tilejob: targets [%d, %d) of %d", lo, hi, e.Target.Len())
	}
	n := hi - lo
	targets := e.Target.Coords(lo, hi, nil)
	cols := make([][]float64, e.Columns())
	for i := range cols {
		cols[i] = make([]float64, n)
	}
	var err error
	switch e.Kind {
	case KNN:
		err = es.ix.Mean(ctx, e.Values, targets, cols[0], progress)
	case IDW:
		err = es.ix.IDW(ctx, e.Values, e.Power, targets, cols[0], progress)
	case Kriging:
		if lo%kriging.EstimateChunk != 0 || (hi%kriging.EstimateChunk != 0 && hi != e.Target.Len()) {
			return nil, fmt.Errorf("tilejob: kriging tile [%d, %d) is not aligned to %d targets", lo, hi, kriging.EstimateChunk)
		}
		out := kriging.Output{Estimate: cols[0]}
		slots := map[string]*[]float64{"variance": &out.Variance, "samples": &out.Samples, "mean_distance": &out.MeanDistance,
			"slope": &out.Slope, "efficiency": &out.Efficiency}
		for i, o := range e.Outputs {
			*slots[o] = cols[1+i]
		}
		err = es.k.Estimate(ctx, targets, &out, progress)
	}
	if err != nil {
		return nil, fmt.Errorf("tilejob: %s of targets [%d, %d): %w", e.Kind, lo, hi, err)
	}
	return cols, nil
}

// Tile is a run of targets [Lo, Hi).
type Tile struct{ Lo, Hi int }

// Key names the tile's shard: "t<Lo>-<Hi>".
func (t Tile) Key() string { return fmt.Sprintf("t%d-%d", t.Lo, t.Hi) }

// Tiles splits n targets into tiles of size targets (rounded up to a
// multiple of kriging.EstimateChunk; 0: DefaultTileTargets), the last one
// shorter.
func Tiles(n, size int) []Tile {
	size = TileSize(size)
	var ts []Tile
	for lo := 0; lo < n; lo += size {
		ts = append(ts, Tile{Lo: lo, Hi: min(n, lo+size)})
	}
	return ts
}

// TileSize is the tile size Tiles uses for a requested size: a multiple of
// kriging.EstimateChunk, at least one; 0 or less gives DefaultTileTargets.
func TileSize(size int) int {
	if size <= 0 {
		return DefaultTileTargets
	}
	return (size + kriging.EstimateChunk - 1) / kriging.EstimateChunk * kriging.EstimateChunk
}

// encodeColumns is a tile's blob: the columns one after the other,
// little-endian float64.
func encodeColumns(cols [][]float64) []byte {
	n := 0
	for _, c := range cols {
		n += len(c)
	}
	b := make([]byte, 0, 8*n)
	for _, c := range cols {
		for _, v := range c {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// specVersion is the layout of the input; a compute worker refuses others.
const specVersion = 1

// spec is the JSON spec of a job: the input's SHA-256, the number of
// targets and the tile size.
type spec struct {
	Version int    `json:"version"`
	Input   string `json:"input"`
	Targets int    `json:"targets"`
	Tile    int    `json:"tile"`
	// InputBytes and Columns size the shard's memory (Handler.Estimate).
	InputBytes int `json:"input_bytes,omitempty"`
	Columns    int `json:"columns,omitempty"`
}

// wire is the gob-encoded input of a job.
type wire struct {
	Version        int
	Kind           Kind
	Coords, Values []float64
	Search         neighbor.Params
	Power          float64
	// Kriging parameters.
	Nugget, Sill, DataVariance float64
	ModellingSpace             string
	Structures                 []structure
	Method                     kriging.Method
	Mean                       float64
	KSearch                    neighbor.Params
	Discretisation             grid.BlockDiscretisation
	CellSize                   [3]float64
	Rotation                   geostat.Rotation
	TableLimit, FactorCache    int
	Outputs                    []string
	// Target: a grid (GridSize[0] > 0), masked when Mask is set, or points.
	Origin, GridCell [3]float64
	GridSize         [3]int
	GridRotation     geostat.Rotation
	Mask             []byte
	Points           []float64
}

type structure struct {
	Type         geostat.StructureType
	Contribution float64
	Alpha        int
	Ellipsoid    geostat.Ellipsoid
}

// Encode returns the input of an estimation: the gob encoding of every
// value it needs.
func Encode(e *Estimation) ([]byte, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	kp := e.Kriging
	w := wire{Version: specVersion, Kind: e.Kind, Coords: e.Coords, Values: e.Values, Search: e.Search, Power: e.Power,
		Method: kp.Method, Mean: kp.Mean, KSearch: kp.Search, Discretisation: kp.Discretisation, CellSize: kp.CellSize,
		Rotation: kp.Rotation, TableLimit: kp.TableLimit, FactorCache: kp.FactorCache, Outputs: e.Outputs, Points: e.Target.Points}
	if v := kp.Variogram; v != nil {
		w.Nugget, w.Sill, w.DataVariance, w.ModellingSpace = v.Nugget, v.Sill, v.DataVariance, v.ModellingSpace
		for _, s := range v.Structures {
			w.Structures = append(w.Structures, structure{Type: s.Type, Contribution: s.Contribution, Alpha: s.Alpha, Ellipsoid: s.Ellipsoid})
		}
	}
	g := e.Target.Grid
	if e.Target.Masked != nil {
		g = e.Target.Masked.Grid
		w.Mask = make([]byte, (g.NumCells()+7)/8)
		for _, c := range e.Target.Masked.ActiveCells() {
			w.Mask[c/8] |= 1 << (c % 8)
		}
	}
	if g != nil {
		w.Origin, w.GridCell, w.GridSize, w.GridRotation = g.Origin, g.CellSize, g.Size, g.Rotation
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&w); err != nil {
		return nil, fmt.Errorf("tilejob: encoding the estimation: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode rebuilds an estimation from its input.
func Decode(b []byte) (*Estimation, error) {
	var w wire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return nil, fmt.Errorf("tilejob: input: %w", err)
	}
	if w.Version != specVersion {
		return nil, fmt.Errorf("tilejob: input version %d, this worker reads %d", w.Version, specVersion)
	}
	e := &Estimation{Kind: w.Kind, Coords: w.Coords, Values: w.Values, Search: w.Search, Power: w.Power, Outputs: w.Outputs}
	if w.Kind == Kriging {
		st := make([]geostat.Structure, len(w.Structures))
		for i, s := range w.Structures {
			st[i] = geostat.Structure{Type: s.Type, Contribution: s.Contribution, Alpha: s.Alpha, Ellipsoid: s.Ellipsoid}
		}
		v, err := geostat.NewVariogram(w.Nugget, st...)
		if err != nil {
			return nil, fmt.Errorf("tilejob: variogram: %w", err)
		}
		v.Sill, v.DataVariance, v.ModellingSpace = w.Sill, w.DataVariance, w.ModellingSpace
		e.Kriging = kriging.Params{Variogram: v, Method: w.Method, Mean: w.Mean, Search: w.KSearch, Discretisation: w.Discretisation,
			CellSize: w.CellSize, Rotation: w.Rotation, TableLimit: w.TableLimit, FactorCache: w.FactorCache}
	}
	if w.GridSize[0] > 0 {
		g, err := grid.New(w.Origin, w.GridSize, w.GridCell, w.GridRotation)
		if err != nil {
			return nil, fmt.Errorf("tilejob: target grid: %w", err)
		}
		if w.Mask == nil {
			e.Target.Grid = g
		} else {
			mask := make([]bool, g.NumCells())
			for c := range mask {
				mask[c] = c/8 < len(w.Mask) && w.Mask[c/8]&(1<<(c%8)) != 0
			}
			if e.Target.Masked, err = grid.NewMasked(g, mask); err != nil {
				return nil, fmt.Errorf("tilejob: target mask: %w", err)
			}
		}
	} else {
		e.Target.Points = w.Points
		if e.Target.Points == nil {
			e.Target.Points = []float64{}
		}
	}
	return e, e.check()
}

// Inputs reads job inputs; *cluster.Queue implements it.
type Inputs interface {
	Input(ctx context.Context, job, digest string, buf []byte) ([]byte, error)
}

// Handler computes tiles of estimation jobs on a compute worker. It keeps
// the prepared estimator of the last few jobs, so a job's input is read and
// its index or kriger built once per worker.
type Handler struct {
	// Inputs reads the jobs' inputs (the worker's queue).
	Inputs Inputs

	mu   sync.Mutex
	jobs map[string]*entry
	keys []string // insertion order, for eviction
}

type entry struct {
	once sync.Once
	es   *Estimator
	sp   spec
	err  error
}

// handlerCache is the number of prepared estimations a Handler keeps.
const handlerCache = 4

// Compute is a cluster.Handler: it estimates the tile named key of the job
// and returns its columns one after the other, little-endian float64.
func (h *Handler) Compute(ctx context.Context, job string, rawSpec json.RawMessage, key string) ([]byte, error) {
	e := h.entry(job)
	e.once.Do(func() { e.es, e.sp, e.err = h.prepare(ctx, job, rawSpec) })
	if e.err != nil {
		h.drop(job, e) // a later delivery tries again (the error may be the context's)
		return nil, e.err
	}
	t, err := e.sp.tile(job, key)
	if err != nil {
		return nil, err
	}
	cols, err := e.es.Estimate(ctx, t.Lo, t.Hi, nil)
	if err != nil {
		return nil, err
	}
	return encodeColumns(cols), nil
}

// Estimate is a cluster.Estimator: the memory computing a tile of the job
// needs, the job's prepared estimation (about three times its input: the
// blob, the decoded data and the neighbour index) and a tile of output
// columns twice (the columns and their encoding).
func (h *Handler) Estimate(_ context.Context, job string, rawSpec json.RawMessage, key string) (int64, error) {
	var sp spec
	if err := json.Unmarshal(rawSpec, &sp); err != nil {
		return 0, fmt.Errorf("tilejob: spec: %w", err)
	}
	t, err := sp.tile(job, key)
	if err != nil {
		return 0, err
	}
	return 3*int64(sp.InputBytes) + 2*8*int64(t.Hi-t.Lo)*int64(max(sp.Columns, 1)), nil
}

// tile returns the tile of job sp named key.
func (sp spec) tile(job, key string) (Tile, error) {
	for _, t := range Tiles(sp.Targets, sp.Tile) {
		if t.Key() == key {
			return t, nil
		}
	}
	return Tile{}, fmt.Errorf("tilejob: job %s has no tile %q", job, key)
}

func (h *Handler) prepare(ctx context.Context, job string, rawSpec json.RawMessage) (*Estimator, spec, error) {
	var sp spec
	if err := json.Unmarshal(rawSpec, &sp); err != nil {
		return nil, sp, fmt.Errorf("tilejob: spec: %w", err)
	}
	if sp.Version != specVersion {
		return nil, sp, fmt.Errorf("tilejob: spec version %d, this worker reads %d", sp.Version, specVersion)
	}
	if h.Inputs == nil {
		return nil, sp, errors.New("tilejob: the handler reads no inputs")
	}
	b, err := h.Inputs.Input(ctx, job, sp.Input, nil)
	if err != nil {
		return nil, sp, err
	}
	e, err := Decode(b)
	if err != nil {
		return nil, sp, err
	}
	if e.Target.Len() != sp.Targets {
		return nil, sp, fmt.Errorf("tilejob: the input has %d targets, the spec %d", e.Target.Len(), sp.Targets)
	}
	es, err := NewEstimator(e)
	return es, sp, err
}

func (h *Handler) entry(job string) *entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.jobs[job]; ok {
		return e
	}
	if h.jobs == nil {
		h.jobs = map[string]*entry{}
	}
	if len(h.keys) == handlerCache {
		delete(h.jobs, h.keys[0])
		h.keys = h.keys[1:]
	}
	e := &entry{}
	h.jobs[job], h.keys = e, append(h.keys, job)
	return e
}

func (h *Handler) drop(job string, e *entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.jobs[job] != e {
		return
	}
	delete(h.jobs, job)
	if i := slices.Index(h.keys, job); i >= 0 {
		h.keys = slices.Delete(h.keys, i, i+1)
	}
}

// Runner runs estimations as cluster jobs from the worker that accepted
// them.
type Runner struct {
	Queue *cluster.Queue
	// TileTargets is the size of a tile in targets (rounded up to a
	// multiple of kriging.EstimateChunk; 0: DefaultTileTargets). An
	// estimation of at most that many targets is not worth sharding.
	TileTargets int
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

// Sharded reports whether an estimation of n targets runs as shards: more
// targets than one tile.
func (r *Runner) Sharded(n int) bool { return n > TileSize(r.TileTargets) }

// Run estimates e on the cluster and returns its columns (the estimate,
// then e.Outputs), one value per target in target order, equal bit for bit
// to those of Estimator.Estimate over every target in one process.
// progress gets the number of done tiles and the total. When ctx ends the
// cluster job is cancelled. When Run returns, the job's input, shard
// results and records are deleted from the cluster.
func (r *Runner) Run(ctx context.Context, e *Estimation, progress func(done, total int)) (cols [][]float64, err error) {
	in, err := Encode(e)
	if err != nil {
		return nil, err
	}
	n := e.Target.Len()
	tiles := Tiles(n, r.TileTargets)
	if len(tiles) == 0 {
		return nil, errors.New("tilejob: the target has no locations")
	}
	keys := make([]string, len(tiles))
	for i, t := range tiles {
		keys[i] = t.Key()
	}
	job, err := cluster.JobName(ctx, JobPrefix)
	if err != nil {
		return nil, err
	}
	digest, err := r.Queue.PutInput(ctx, job, in)
	// Whatever the outcome, the cluster forgets the job and its input once
	// Run returns (a failed cleanup is logged and counted, never the job's
	// outcome).
	defer func() { r.Queue.Cleanup(ctx, job, digest) }()
	if err != nil {
		return nil, err
	}
	sp, err := json.Marshal(spec{Version: specVersion, Input: digest, Targets: n, Tile: TileSize(r.TileTargets), InputBytes: len(in), Columns: 1 + len(e.Outputs)})
	if err != nil {
		return nil, err
	}
	if err := r.Queue.SubmitFollow(ctx, ShardKind, job, sp, keys, progress, r.notice(ctx)); err != nil {
		return nil, err
	}
	cols = make([][]float64, e.Columns())
	for i := range cols {
		cols[i] = make([]float64, n)
	}
	var buf []byte
	for _, t := range tiles {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tilejob: assembly stopped: %w", err)
		}
		buf, err = r.Queue.ResultInto(ctx, job, t.Key(), buf)
		if err != nil {
			return nil, err
		}
		m := t.Hi - t.Lo
		if len(buf) != 8*m*len(cols) {
			return nil, fmt.Errorf("tilejob: tile %s: blob of %d bytes, want %d", t.Key(), len(buf), 8*m*len(cols))
		}
		for c, col := range cols {
			for i := range m {
				col[t.Lo+i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*(c*m+i):]))
			}
		}
	}
	return cols, nil
}
