package simjob_test

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
	"github.com/geostat-engine/geostat/worker/objects"
)

// job is a small masked, filtered, block-discretised ordinary-kriging
// simulation with a distribution, a search neighbourhood, all four outputs
// and a NaN datum (dropped by tbsim).
func job(t *testing.T, realisations int) (tbsim.Input, tbsim.Params) {
	spec := synthetic.Simulation(synthetic.Small, synthetic.DefaultSeed)
	spec.GridSize = [3]int{14, 10, 6}
	c, err := synthetic.New(spec)
	require.NoError(t, err)
	m, err := c.Masked()
	require.NoError(t, err)
	values := append([]float64(nil), c.Grades...)
	values[3] = math.NaN()
	filter := make([]bool, m.NumActive())
	for i := range filter {
		filter[i] = i%7 != 0
	}
	p := tbsim.DefaultParams()
	p.Realisations, p.Lines, p.Seed = realisations, 40, 1234
	p.Method = kriging.Ordinary
	p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}
	p.SaveGaussian = true
	p.Search = &neighbor.Params{Ellipsoid: c.Variogram.Structures[0].Ellipsoid, MaxSamples: 12, MinSamples: 2, MaxPerOctant: 3}
	return tbsim.Input{Masked: m, Filter: filter, Coords: c.Coords, Values: values, Variogram: c.Variogram, Distribution: c.Distribution}, p
}

func writers(t *testing.T, p tbsim.Params) []*objects.TableWriter {
	var ws []*objects.TableWriter
	for range shard.Outputs(p) {
		w, err := objects.NewTableWriter(&bytes.Buffer{}, objects.Float64Types(p.Realisations), objects.EnsembleColumnNames("v", p.Realisations), &objects.WriteOptions{RowGroupRows: 150})
		require.NoError(t, err)
		ws = append(ws, w)
	}
	return ws
}

func closeAll(t *testing.T, ws []*objects.TableWriter) []objects.Blob {
	out, err := shard.Close(ws)
	require.NoError(t, err)
	return out
}

// The decoded spec rebuilds the inputs exactly: every shard computed from
// it equals the shard computed from the original inputs, byte for byte.
func TestSpecRoundTrip(t *testing.T) {
	in, p := job(t, 3)
	sz := shard.Sizes{TileBytes: 4 << 10, ShardBytes: 1 << 10}
	spec, err := simjob.Encode(in, p, sz)
	require.NoError(t, err)
	j, err := simjob.Decode(spec)
	require.NoError(t, err)
	pl, err := simjob.Plan(in, p, sz)
	require.NoError(t, err)
	require.Equal(t, pl, j.Plan)
	require.Greater(t, len(pl.Shards), 3)
	assert.Equal(t, in.Filter, j.Input.Filter)
	assert.Equal(t, in.Masked.ActiveCells(), j.Input.Masked.ActiveCells())
	assert.Equal(t, in.Coords, j.Input.Coords)
	require.Equal(t, len(in.Values), len(j.Input.Values))
	for i, v := range in.Values {
		assert.Equal(t, math.Float64bits(v), math.Float64bits(j.Input.Values[i]), "value %d", i)
	}
	h := &simjob.Handler{}
	for _, s := range pl.Shards {
		want, err := shard.Compute(context.Background(), in, p, s)
		require.NoError(t, err)
		got, err := h.Compute(context.Background(), "job1", spec, s.Key())
		require.NoError(t, err)
		require.Equal(t, shard.Digest(want), shard.Digest(got), "shard %s", s.Key())
	}
	_, err = h.Compute(context.Background(), "job1", spec, "r0-1.q999-1000")
	require.ErrorContains(t, err, "has no shard")
}

// Runner submits, follows and assembles a job run by a Work loop on an
// embedded server; the ensembles equal the single-process ones byte for
// byte, and progress counts done shards up to the total.
func TestRunner(t *testing.T) {
	in, p := job(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- q.Work(wctx, (&simjob.Handler{}).Compute, nil) }()
	defer func() { stop(); require.NoError(t, <-done) }()

	sz := shard.Sizes{TileBytes: 4 << 10, ShardBytes: 1 << 10}
	pl, err := simjob.Plan(in, p, sz)
	require.NoError(t, err)
	ws := writers(t, p)
	var last, total int
	r := &simjob.Runner{Queue: q, Sizes: sz}
	require.NoError(t, r.Run(ctx, in, p, ws, func(d, n int) {
		assert.Greater(t, d, last)
		last, total = d, n
	}))
	assert.Equal(t, len(pl.Shards), total)
	assert.Equal(t, total, last)
	ref := writers(t, p)
	require.NoError(t, shard.WriteSingle(ctx, in, p, ref))
	require.Equal(t, closeAll(t, ref), closeAll(t, ws))
	// After the assembly the cluster holds nothing of the job.
	clustertest.RequireEmpty(t, ctx, nc)
}

// A Runner whose context ends cancels the cluster job: no Work loop runs,
// so the job stays queued until the cancel purges it.
func TestRunnerCancel(t *testing.T) {
	in, p := job(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	r := &simjob.Runner{Queue: q}
	clustertest.Cancel(t, ctx, q, nc, func(rctx context.Context) error { return r.Run(rctx, in, p, writers(t, p), nil) })
}

// A Runner whose context ends while it is still queuing its many shards
// (one per coarse row and realisation) leaves nothing in the cluster: the
// shards queued so far are purged and the job's records deleted.
func TestRunnerCancelDuringSubmit(t *testing.T) {
	in, p := job(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	r := &simjob.Runner{Queue: q, Sizes: shard.Sizes{TileBytes: 1, ShardBytes: 1, MinTiles: -1}}
	pl, err := simjob.Plan(in, p, r.Sizes.WithDefaults())
	require.NoError(t, err)
	require.Greater(t, len(pl.Shards), 50, "enough shards for the cancel to land while they are queued")
	clustertest.Cancel(t, ctx, q, nc, func(rctx context.Context) error { return r.Run(rctx, in, p, writers(t, p), nil) })
}

// A shard's memory estimate counts at least its blob and grows with the
// threads; Handler.Estimate gives Job.Memory with its Threads; a Runner
// refuses a job whose largest shard exceeds MaxMemory before queuing
// anything, and runs it when the largest shard fits exactly.
func TestShardMemory(t *testing.T) {
	in, p := job(t, 3)
	sz := shard.Sizes{TileBytes: 4 << 10, ShardBytes: 1 << 10}
	spec, err := simjob.Encode(in, p, sz)
	require.NoError(t, err)
	j, err := simjob.Decode(spec)
	require.NoError(t, err)
	h := &simjob.Handler{Threads: 3}
	var largest int64
	for _, s := range j.Plan.Shards {
		blob := int64(shard.Outputs(p) * (s.R1 - s.R0) * (s.Hi - s.Lo) * 8)
		m1, m3 := j.Memory(s, 1), j.Memory(s, 3)
		assert.Greater(t, m1, blob)
		assert.Equal(t, m1+2*4*4096*int64(p.Discretisation.Count()*(s.R1-s.R0))*8, m3, "tiles in flight per thread")
		got, err := h.Estimate(context.Background(), "job1", spec, s.Key())
		require.NoError(t, err)
		assert.Equal(t, m3, got)
		largest = max(largest, m3)
	}
	_, err = h.Estimate(context.Background(), "job1", spec, "r0-1.q999-1000")
	require.ErrorContains(t, err, "has no shard")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{MaxMemory: largest})
	r := &simjob.Runner{Queue: q, Sizes: sz, MaxMemory: largest - 1, Threads: 3}
	err = r.Run(ctx, in, p, writers(t, p), nil)
	require.ErrorIs(t, err, simjob.ErrShardTooLarge)
	require.ErrorContains(t, err, "-max-memory")
	pending, _, err := q.Pending(ctx)
	require.NoError(t, err)
	assert.Zero(t, pending, "nothing queued")
	clustertest.RequireEmpty(t, ctx, nc)

	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- q.WorkSized(wctx, (&simjob.Handler{}).Compute, h.Estimate, nil) }()
	defer func() { stop(); require.NoError(t, <-done) }()
	r.MaxMemory = largest
	ws := writers(t, p)
	require.NoError(t, r.Run(ctx, in, p, ws, nil))
	ref := writers(t, p)
	require.NoError(t, shard.WriteSingle(ctx, in, p, ref))
	require.Equal(t, closeAll(t, ref), closeAll(t, ws))
}

// A Handler computing shards of more realisation ranges than it keeps
// prepared (6 ranges, 4 kept), in an order that comes back to evicted
// ranges, gives every shard the bytes of shard.Compute.
func TestHandlerEvictsPreparedRanges(t *testing.T) {
	in, p := job(t, 6)
	sz := shard.Sizes{TileBytes: 4 << 10, ShardBytes: 1}
	spec, err := simjob.Encode(in, p, sz)
	require.NoError(t, err)
	pl, err := simjob.Plan(in, p, sz)
	require.NoError(t, err)
	ranges := map[int]bool{}
	for _, s := range pl.Shards {
		ranges[s.R0] = true
	}
	require.Len(t, ranges, 6, "one realisation per shard")
	h := &simjob.Handler{}
	// Every shard in plan order (tile by tile, each over all ranges), then
	// in reverse.
	order := append([]shard.Shard(nil), pl.Shards...)
	for i := len(pl.Shards) - 1; i >= 0; i-- {
		order = append(order, pl.Shards[i])
	}
	want := map[string]string{}
	for _, s := range order {
		got, err := h.Compute(context.Background(), "job-evict", spec, s.Key())
		require.NoError(t, err)
		if _, ok := want[s.Key()]; !ok {
			b, err := shard.Compute(context.Background(), in, p, s)
			require.NoError(t, err)
			want[s.Key()] = shard.Digest(b)
		}
		require.Equal(t, want[s.Key()], shard.Digest(got), "shard %s", s.Key())
	}
}
