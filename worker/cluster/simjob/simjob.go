// Package simjob runs a turning-bands simulation as shards on the cluster
// queue (package cluster): Encode turns a simulation's inputs and
// parameters into a self-contained job spec, Handler computes a shard of
// such a spec on a compute worker, and Runner submits a job, follows it
// and assembles the ensembles on the worker that accepted the request.
//
// The spec carries every input of the simulation (grid geometry, mask,
// target filter, conditioning data, variogram, distribution, parameters),
// so a compute worker needs no access to the object store. Floating-point
// values travel as their IEEE bits (gob), so a compute worker simulates
// exactly the inputs the api worker read.
package simjob

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/objects"
)

// specVersion is the layout of the spec; a compute worker refuses others.
const specVersion = 2

// wire is the gob-encoded body of a spec.
type wire struct {
	Version int
	// Grid geometry.
	Origin, CellSize [3]float64
	Size             [3]int
	Rotation         geostat.Rotation
	// Mask is the active-cell bitset of a masked grid (nil: not masked);
	// Filter the selected output cells (nil: no filter), FilterLen their
	// count.
	Mask      []byte
	Filter    []byte
	FilterLen int
	Coords    []float64
	Values    []float64
	// Variogram.
	Nugget, Sill, DataVariance float64
	ModellingSpace             string
	Structures                 []structure
	// Distribution (HasDist false: none).
	HasDist      bool
	DistZ, DistP []float64
	Lower, Upper geostat.Tail
	// Parameters.
	Realisations, Lines int
	Seed                int64
	Method              kriging.Method
	Discretisation      grid.BlockDiscretisation
	Search              *neighbor.Params
	Normalise, Gaussian bool
	Sizes               shard.Sizes
}

type structure struct {
	Type         geostat.StructureType
	Contribution float64
	Alpha        int
	Ellipsoid    geostat.Ellipsoid
}

// Encode returns the job spec of the simulation (in, p) split with sz:
// a JSON string holding the gob encoding of every input.
func Encode(in tbsim.Input, p tbsim.Params, sz shard.Sizes) (json.RawMessage, error) {
	if in.Variogram == nil {
		return nil, errors.New("simjob: no variogram")
	}
	g := in.Grid
	if in.Masked != nil {
		g = in.Masked.Grid
	}
	if g == nil {
		return nil, errors.New("simjob: no grid")
	}
	w := wire{Version: specVersion, Origin: g.Origin, CellSize: g.CellSize, Size: g.Size, Rotation: g.Rotation,
		Coords: in.Coords, Values: in.Values,
		Nugget: in.Variogram.Nugget, Sill: in.Variogram.Sill, DataVariance: in.Variogram.DataVariance, ModellingSpace: in.Variogram.ModellingSpace,
		Realisations: p.Realisations, Lines: p.Lines, Seed: p.Seed, Method: p.Method, Discretisation: p.Discretisation,
		Search: p.Search, Normalise: p.NormaliseVariogram, Gaussian: p.SaveGaussian, Sizes: sz}
	if in.Masked != nil {
		mask := make([]bool, g.NumCells())
		for _, c := range in.Masked.ActiveCells() {
			mask[c] = true
		}
		w.Mask = packBits(mask)
	}
	if in.Filter != nil {
		w.Filter, w.FilterLen = packBits(in.Filter), len(in.Filter)
	}
	for _, s := range in.Variogram.Structures {
		w.Structures = append(w.Structures, structure{Type: s.Type, Contribution: s.Contribution, Alpha: s.Alpha, Ellipsoid: s.Ellipsoid})
	}
	if d := in.Distribution; d != nil {
		w.HasDist = true
		w.DistZ, w.DistP = make([]float64, d.Len()), make([]float64, d.Len())
		for j := range w.DistZ {
			w.DistZ[j], w.DistP[j] = d.Node(j)
		}
		w.Lower, w.Upper = d.Tails()
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&w); err != nil {
		return nil, fmt.Errorf("simjob: encoding the spec: %w", err)
	}
	return json.Marshal(buf.Bytes()) // a base64 JSON string
}

// Job is a decoded spec: the simulation and its plan.
type Job struct {
	Input  tbsim.Input
	Params tbsim.Params
	Plan   *shard.Plan
	shards map[string]shard.Shard

	mu       sync.Mutex
	prepared map[[2]int]*preparedRange // by realisation range
	ranges   [][2]int                  // insertion order, for eviction
	active   int                       // shards being computed
}

// preparedRange is a realisation range prepared once for the shards of a
// job that a process computes (the shards of every tile share it).
type preparedRange struct {
	once sync.Once
	pr   *tbsim.Prepared
	err  error
}

// preparedRanges is the number of realisation ranges a Job keeps prepared:
// a plan's shards come tile by tile, each tile's in realisation order, and
// a plan has few ranges (a shard of one tile holds as many realisations as
// its size allows).
const preparedRanges = 4

// Compute computes shard s of the job, preparing its realisation range on
// first use (tbsim.Prepare) and reusing it for the other tiles: the blob is
// shard.Compute's, bit for bit.
func (j *Job) Compute(ctx context.Context, s shard.Shard) ([]byte, error) {
	return j.compute(ctx, s, nil)
}

// compute is Compute; added, when not nil, is told of each range the job
// prepares.
func (j *Job) compute(ctx context.Context, s shard.Shard, added func(key [2]int)) ([]byte, error) {
	key := [2]int{s.R0, s.R1}
	j.mu.Lock()
	j.active++
	defer func() { j.mu.Lock(); j.active--; j.mu.Unlock() }()
	e, ok := j.prepared[key]
	if !ok {
		if j.prepared == nil {
			j.prepared = make(map[[2]int]*preparedRange)
		}
		if len(j.ranges) == preparedRanges {
			delete(j.prepared, j.ranges[0])
			j.ranges = j.ranges[1:]
		}
		e = &preparedRange{}
		j.prepared[key], j.ranges = e, append(j.ranges, key)
	}
	j.mu.Unlock()
	if !ok && added != nil {
		added(key)
	}
	e.once.Do(func() { e.pr, e.err = tbsim.Prepare(ctx, j.Input, j.Params, s.R0, s.R1) })
	if e.err != nil {
		// A preparation stopped by its shard's context is not the range's
		// fault: the next shard prepares it again.
		j.drop(key, e)
		return nil, fmt.Errorf("shard %s: %w", s.Key(), e.err)
	}
	return shard.ComputePrepared(ctx, e.pr, j.Params, s, nil)
}

// idle reports whether no shard of the job is being computed.
func (j *Job) idle() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.active == 0
}

// drop forgets the prepared range key (only if it is e, when e is not nil).
func (j *Job) drop(key [2]int, e *preparedRange) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if cur, ok := j.prepared[key]; !ok || e != nil && cur != e {
		return
	}
	delete(j.prepared, key)
	if i := slices.Index(j.ranges, key); i >= 0 {
		j.ranges = slices.Delete(j.ranges, i, i+1)
	}
}

// Decode rebuilds the simulation and its plan from a spec.
func Decode(spec json.RawMessage) (*Job, error) {
	var b []byte
	if err := json.Unmarshal(spec, &b); err != nil {
		return nil, fmt.Errorf("simjob: spec: %w", err)
	}
	var w wire
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&w); err != nil {
		return nil, fmt.Errorf("simjob: spec: %w", err)
	}
	if w.Version != specVersion {
		return nil, fmt.Errorf("simjob: spec version %d, this worker reads %d", w.Version, specVersion)
	}
	g, err := grid.New(w.Origin, w.Size, w.CellSize, w.Rotation)
	if err != nil {
		return nil, fmt.Errorf("simjob: grid: %w", err)
	}
	in := tbsim.Input{Grid: g, Coords: w.Coords, Values: w.Values}
	if w.Mask != nil {
		if in.Masked, err = grid.NewMasked(g, unpackBits(w.Mask, g.NumCells())); err != nil {
			return nil, fmt.Errorf("simjob: mask: %w", err)
		}
	}
	if w.Filter != nil {
		in.Filter = unpackBits(w.Filter, w.FilterLen)
	}
	st := make([]geostat.Structure, len(w.Structures))
	for i, s := range w.Structures {
		st[i] = geostat.Structure{Type: s.Type, Contribution: s.Contribution, Alpha: s.Alpha, Ellipsoid: s.Ellipsoid}
	}
	if in.Variogram, err = geostat.NewVariogram(w.Nugget, st...); err != nil {
		return nil, fmt.Errorf("simjob: variogram: %w", err)
	}
	in.Variogram.Sill, in.Variogram.DataVariance, in.Variogram.ModellingSpace = w.Sill, w.DataVariance, w.ModellingSpace
	if w.HasDist {
		if in.Distribution, err = geostat.NewDistribution(w.DistZ, w.DistP, w.Lower, w.Upper); err != nil {
			return nil, fmt.Errorf("simjob: distribution: %w", err)
		}
	}
	p := tbsim.DefaultParams()
	p.Realisations, p.Lines, p.Seed, p.Method = w.Realisations, w.Lines, w.Seed, w.Method
	p.Discretisation, p.Search, p.NormaliseVariogram, p.SaveGaussian = w.Discretisation, w.Search, w.Normalise, w.Gaussian
	pl, err := Plan(in, p, w.Sizes)
	if err != nil {
		return nil, err
	}
	j := &Job{Input: in, Params: p, Plan: pl, shards: make(map[string]shard.Shard, len(pl.Shards))}
	for _, s := range pl.Shards {
		j.shards[s.Key()] = s
	}
	return j, nil
}

// Plan splits the simulation (in, p) into shards of sizes sz.
func Plan(in tbsim.Input, p tbsim.Params, sz shard.Sizes) (*shard.Plan, error) {
	starts, err := tbsim.RowStarts(in)
	if err != nil {
		return nil, fmt.Errorf("simjob: %w", err)
	}
	return shard.NewPlan(starts, p.Realisations, shard.Outputs(p), sz)
}

func packBits(v []bool) []byte {
	b := make([]byte, (len(v)+7)/8)
	for i, x := range v {
		if x {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

func unpackBits(b []byte, n int) []bool {
	v := make([]bool, n)
	for i := range v {
		v[i] = i/8 < len(b) && b[i/8]&(1<<(i%8)) != 0
	}
	return v
}

// Memory estimates the bytes that computing shard s of the job needs in a
// process computing with threads cores (0: GOMAXPROCS), result included:
// the shard's blob (outputs × realisations × cells × 8), the tiles in
// flight (threads × 4 × 4,096 sub-points × realisations × 8, as a
// single-process simulation counts them), the prepared realisation range
// (data residuals and kriger, (realisations + 16) × 8 bytes per datum, and
// the covariance table, 4·n·(n+1) bytes for n ≤ 4,000 data) and the decoded
// spec (data, mask and filter). A Handler also keeps up to 4 prepared
// ranges for reuse beside the shards it computes.
func (j *Job) Memory(s shard.Shard, threads int) int64 {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	rr, m := int64(s.R1-s.R0), int64(s.Hi-s.Lo)
	blob := int64(shard.Outputs(j.Params)) * rr * m * 8
	tiles := int64(threads) * 4 * 4096 * int64(j.Params.Discretisation.Count()) * rr * 8
	data := int64(len(j.Input.Values))
	prepared := data * (rr + 16) * 8
	if data <= kriging.DefaultTableLimit {
		prepared += data * (data + 1) / 2 * 8 // the kriger's covariance table
	}
	spec := data*4*8 + 2*int64(j.Plan.Cells)
	if j.Input.Masked != nil {
		spec += int64(j.Input.Masked.Grid.NumCells())
	}
	return blob + tiles + prepared + spec
}

// Handler computes shards of simulation jobs on a compute worker. It keeps
// the decoded spec of the last few jobs, so a job's shards decode it once.
type Handler struct {
	// Threads is the number of cores a shard computes with (0:
	// GOMAXPROCS), for Estimate; Compute takes them from its context
	// (geostat.WithWorkers).
	Threads int

	mu       sync.Mutex
	jobs     map[string]*Job
	keys     []string      // insertion order, for eviction
	prepared []preparedRef // prepared ranges of all jobs, oldest first
}

// preparedRef names a prepared range of a job in a Handler's cache.
type preparedRef struct {
	job *Job
	key [2]int
}

// handlerCache is the number of decoded specs a Handler keeps; it keeps
// preparedRanges prepared realisation ranges over all of them (a range
// holds the data residuals and the kriger, whose covariance table alone
// takes 4·n² bytes for n ≤ 4,000 data).
const handlerCache = 4

// Compute is a cluster.Handler: it computes the shard named key of the job.
func (h *Handler) Compute(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
	j, err := h.job(job, spec)
	if err != nil {
		return nil, err
	}
	s, ok := j.shards[key]
	if !ok {
		return nil, fmt.Errorf("simjob: job %s has no shard %q", job, key)
	}
	return j.compute(ctx, s, func(key [2]int) {
		// Keep the latest preparedRanges ranges, and none of a job with no
		// shard being computed when another job's range is added (the
		// usual end of a job: its worker goes on with the next one).
		h.mu.Lock()
		keep := h.prepared[:0]
		var old []preparedRef
		for i, r := range h.prepared {
			if i < len(h.prepared)+1-preparedRanges || r.job != j && r.job.idle() {
				old = append(old, r)
			} else {
				keep = append(keep, r)
			}
		}
		h.prepared = append(keep, preparedRef{j, key})
		h.mu.Unlock()
		for _, r := range old {
			r.job.drop(r.key, nil)
		}
	})
}

// Estimate is a cluster.Estimator: the memory the shard named key of the
// job needs (Job.Memory with h.Threads).
func (h *Handler) Estimate(_ context.Context, job string, spec json.RawMessage, key string) (int64, error) {
	j, err := h.job(job, spec)
	if err != nil {
		return 0, err
	}
	s, ok := j.shards[key]
	if !ok {
		return 0, fmt.Errorf("simjob: job %s has no shard %q", job, key)
	}
	return j.Memory(s, h.Threads), nil
}

func (h *Handler) job(id string, spec json.RawMessage) (*Job, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if j, ok := h.jobs[id]; ok {
		return j, nil
	}
	j, err := Decode(spec)
	if err != nil {
		return nil, err
	}
	if h.jobs == nil {
		h.jobs = make(map[string]*Job)
	}
	if len(h.keys) == handlerCache {
		delete(h.jobs, h.keys[0])
		h.keys = h.keys[1:]
	}
	h.jobs[id], h.keys = j, append(h.keys, id)
	return j, nil
}

// Runner runs simulations as cluster jobs from the worker that accepted
// them.
type Runner struct {
	Queue *cluster.Queue
	// Sizes of the shards (zero: the shard package's defaults).
	Sizes shard.Sizes
	// MaxMemory, when positive, refuses a job with a shard whose memory
	// estimate (Job.Memory with Threads) exceeds it, before anything is
	// queued: the memory budget of this worker, which the compute workers
	// are expected to share (a compute worker never takes a shard above
	// its own budget).
	MaxMemory int64
	Threads   int
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

// ErrShardTooLarge is returned by Run for a job with a shard above
// Runner.MaxMemory.
var ErrShardTooLarge = errors.New("a shard needs more memory than a compute worker may use")

// Run simulates (in, p) on the cluster and writes the ensembles into
// writers (one per output, as shard.WriteSingle). progress gets the number
// of done shards and the total. When ctx ends the cluster job is cancelled.
// When Run returns (assembled, failed or cancelled) the job's shard
// results and records are deleted from the cluster (Queue.Cleanup, whose
// Forget also collects orphan result chunks older than the ack deadline; a
// failed cleanup does not change Run's outcome).
func (r *Runner) Run(ctx context.Context, in tbsim.Input, p tbsim.Params, writers []*objects.TableWriter, progress func(done, total int)) (err error) {
	sz := r.Sizes.WithDefaults() // explicit in the spec
	spec, err := Encode(in, p, sz)
	if err != nil {
		return err
	}
	pl, err := Plan(in, p, sz)
	if err != nil {
		return err
	}
	if r.MaxMemory > 0 {
		j := &Job{Input: in, Params: p, Plan: pl}
		for _, s := range pl.Shards {
			if need := j.Memory(s, r.Threads); need > r.MaxMemory {
				return fmt.Errorf("%w: shard %s of %d realisations × %d cells needs an estimated %.1f MiB, more than -max-memory %.1f MiB; lower -shard-size",
					ErrShardTooLarge, s.Key(), s.R1-s.R0, s.Hi-s.Lo, float64(need)/(1<<20), float64(r.MaxMemory)/(1<<20))
			}
		}
	}
	keys := make([]string, len(pl.Shards))
	for i, s := range pl.Shards {
		keys[i] = s.Key()
	}
	job, err := cluster.JobName(ctx, JobPrefix)
	if err != nil {
		return err
	}
	// Whatever the outcome, a failed or cut-off submit included, the
	// cluster forgets the job once Run returns: its results are in the
	// writers or no longer wanted. A failed cleanup is logged and counted
	// (Queue.Cleanup), never the job's outcome.
	defer r.Queue.Cleanup(ctx, job)
	if err := r.Queue.SubmitKind(ctx, ShardKind, job, spec, keys); err != nil {
		return fmt.Errorf("submitting the shards: %w", err)
	}
	// Follow the done records while assembling: the assembler writes each
	// tile as soon as its shards are done, while the compute workers go on
	// with the next tiles (the shards are queued tile by tile).
	wctx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	var mu sync.Mutex
	done := make(map[string]bool, len(keys))
	changed := make(chan struct{}, 1)
	finished := make(chan struct{})
	var st cluster.Status
	var waitErr error
	go func() {
		defer close(finished)
		defer func() { // a panic (of progress, say) fails the job, not the process
			if p := recover(); p != nil {
				waitErr = geostat.NewPanicError(p)
			}
		}()
		st, waitErr = r.Queue.Follow(wctx, job, func(key string, n, total int) {
			mu.Lock()
			done[key] = true
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
			if progress != nil {
				progress(n, total)
			}
		}, r.notice(ctx))
	}()
	isDone := func(key string) bool {
		mu.Lock()
		defer mu.Unlock()
		return done[key]
	}
	// Assemble holds one blob at a time: each fetch reuses the last one's storage.
	var buf []byte
	err = shard.Assemble(ctx, pl, writers, func(ctx context.Context, s shard.Shard) ([]byte, error) {
		for !isDone(s.Key()) {
			select {
			case <-changed:
			case <-finished:
				if !isDone(s.Key()) {
					return nil, errJobOver
				}
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		b, err := r.Queue.ResultInto(ctx, job, s.Key(), buf)
		if err == nil {
			buf = b
		}
		return b, err
	})
	stopWait()
	<-finished // no progress call after Run returns
	if err == nil {
		return nil
	}
	switch {
	case ctx.Err() != nil:
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if cerr := r.Queue.Cancel(cctx, job); cerr != nil {
			return errors.Join(ctx.Err(), fmt.Errorf("cancelling the cluster job %s: %w", job, cerr))
		}
		return ctx.Err()
	case st.Failed != "":
		return cluster.FailedError(job, st.Failed)
	case st.Cancelled:
		return fmt.Errorf("cluster job %s was cancelled", job)
	case errors.Is(err, errJobOver) && waitErr != nil:
		return fmt.Errorf("cluster job %s: %w", job, waitErr)
	}
	return err
}

// JobPrefix starts the cluster job ids of simulations (a name only: shards
// are routed by their ShardKind).
const JobPrefix = "sim-"

// ShardKind is the shard kind of simulations (cluster.SubmitKind): a compute
// worker computes their shards with a Handler.
const ShardKind = "sim"

// errJobOver is what the assembler's fetch answers when the job's watch
// ended before the shard was done (the job failed or was cancelled, or
// the watch failed): Run then reports why.
var errJobOver = errors.New("the cluster job ended before the shard was done")
