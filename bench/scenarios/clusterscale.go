package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/internal/cputime"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
	"github.com/geostat-engine/geostat/worker/objects"
)

func clusterTwoComputes() harness.Scenario {
	return harness.Scenario{
		Name: "cluster-two-computes",
		Description: "the tbsim-cond simulation written as a zstd Parquet ensemble (a) in one process with 2 threads " +
			"(shard.WriteSingle) and (b) as shards on an embedded NATS JetStream server computed by two compute loops " +
			"of 1 thread each, each on its own connection, and assembled as the shards arrive (simjob.Runner); each " +
			"run does both, alternating their order; the time is a + b, the details give the shard count, both " +
			"medians of wall and CPU time (the process's, so the load of other processes does not count) and b/a of each",
		Setup: setupClusterTwoComputes,
	}
}

func setupClusterTwoComputes(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.Simulation(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	// The tbsim-cond workload.
	p := tbsim.DefaultParams()
	p.Lines = simulationLines
	p.Seed = int64(cfg.Seed % (1 << 62))
	p.Method = kriging.Simple
	p.Realisations = simulationRealisations(cfg.Size)
	in := tbsim.Input{Grid: c.Grid, Variogram: c.Variogram, Coords: c.Coords, Values: c.Grades, Distribution: c.Distribution}
	cells := c.Grid.NumCells()
	// The default plan: DefaultMinTiles tiles of every realisation (the
	// medium ensemble is far below a tile's 256 MiB). The two compute loops
	// share the tiles; each prepares the realisations (data residuals,
	// kriger) once, and each cell's conditioning is computed once, as in
	// one process. (Shards of one realisation of the whole grid each redo
	// the conditioning of every cell: 5.8 times the single-process time on
	// the medium case.)
	sizes := shard.Sizes{}
	plan, err := simjob.Plan(in, p, sizes)
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp("", "geostat-bench-nats-")
	if err != nil {
		return nil, err
	}
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var conns []*nats.Conn
	wctx, stopWork := context.WithCancel(context.Background())
	workDone := make(chan struct{}, 2)
	loops := 0
	closeAll := func() {
		stopWork()
		for ; loops > 0; loops-- {
			<-workDone
		}
		for _, nc := range conns {
			nc.Close()
		}
		ns.Shutdown()
		ns.WaitForShutdown()
		os.RemoveAll(dir)
	}
	open := func(name string) (*cluster.Queue, error) {
		nc, err := cluster.ConnectInProcess(ns, name)
		if err != nil {
			return nil, err
		}
		conns = append(conns, nc)
		return cluster.Open(ctx, nc, cluster.Config{})
	}
	api, err := open("bench-api")
	if err != nil {
		closeAll()
		return nil, err
	}
	// Two compute loops of one shard at a time, one thread each.
	for i := 0; i < 2; i++ {
		q, err := open(fmt.Sprintf("bench-compute-%d", i))
		if err != nil {
			closeAll()
			return nil, err
		}
		h := &simjob.Handler{}
		loops++
		go func() {
			defer func() { workDone <- struct{}{} }()
			_ = q.Work(wctx, func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
				return h.Compute(geostat.WithWorkers(ctx, 1), job, spec, key)
			}, nil)
		}()
	}
	runner := &simjob.Runner{Queue: api, Sizes: sizes}

	newWriters := func() ([]*objects.TableWriter, error) {
		types := objects.Float64Types(p.Realisations)
		var ws []*objects.TableWriter
		for range shard.Outputs(p) {
			w, err := objects.NewTableWriter(io.Discard, types, objects.EnsembleColumnNames("grade", p.Realisations), nil)
			if err != nil {
				return nil, err
			}
			ws = append(ws, w)
		}
		return ws, nil
	}
	single := func(ctx context.Context) ([]objects.Blob, error) {
		ws, err := newWriters()
		if err != nil {
			return nil, err
		}
		if err := shard.WriteSingle(geostat.WithWorkers(ctx, 2), in, p, ws); err != nil {
			return nil, err
		}
		return shard.Close(ws)
	}
	sharded := func(ctx context.Context, progress func(done, total int)) ([]objects.Blob, error) {
		ws, err := newWriters()
		if err != nil {
			return nil, err
		}
		if err := runner.Run(ctx, in, p, ws, progress); err != nil {
			return nil, err
		}
		return shard.Close(ws)
	}

	var a, b, cpuA, cpuB, computeB []time.Duration
	var gotA, gotB []objects.Blob
	run := 0
	w := &harness.Workload{
		Info: fmt.Sprintf("%d data, %d cells, %d realisations, %d lines; (b) %d shards over 2 compute loops of 1 thread, embedded server, in-process connections",
			len(in.Coords)/3, cells, p.Realisations, p.Lines, len(plan.Shards)),
		Items:  int64(cells),
		Unit:   "cells",
		Counts: []harness.Count{{Name: "cell realisations (a and b)", PerRun: float64(2 * cells * p.Realisations)}},
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		run++
		doA := func() error {
			t0, c0 := time.Now(), cputime.Process()
			var err error
			gotA, err = single(ctx)
			a, cpuA = append(a, time.Since(t0)), append(cpuA, cputime.Process()-c0)
			return err
		}
		doB := func() error {
			t0, c0 := time.Now(), cputime.Process()
			var allDone time.Duration
			var err error
			gotB, err = sharded(ctx, func(done, total int) {
				if done == total {
					allDone = time.Since(t0)
				}
				if progress != nil {
					progress(done, total)
				}
			})
			b, cpuB = append(b, time.Since(t0)), append(cpuB, cputime.Process()-c0)
			computeB = append(computeB, allDone)
			return err
		}
		first, second := doA, doB
		if run%2 == 0 {
			first, second = doB, doA
		}
		if err := first(); err != nil {
			return err
		}
		return second()
	}
	w.Check = func() error {
		if len(gotA) == 0 || !slices.Equal(gotA, gotB) {
			return fmt.Errorf("the sharded ensemble %+v differs from the single-process one %+v", gotB, gotA)
		}
		return nil
	}
	w.Details = func() map[string]float64 {
		ma, mb := timedMedian(a), timedMedian(b)
		ca, cb := timedMedian(cpuA), timedMedian(cpuB)
		return map[string]float64{
			"single_2_threads_median_s":     ma.Seconds(),
			"sharded_2x1_median_s":          mb.Seconds(),
			"ratio_sharded_over_single":     mb.Seconds() / ma.Seconds(),
			"shards":                        float64(len(plan.Shards)),
			"single_cpu_median_s":           ca.Seconds(),
			"sharded_cpu_median_s":          cb.Seconds(),
			"ratio_cpu_sharded_over_single": cb.Seconds() / ca.Seconds(),
			"sharded_all_done_median_s":     timedMedian(computeB).Seconds(),
		}
	}
	w.Close = closeAll
	return w, nil
}

// timedMedian is the median of the durations of the timed runs: d without
// its first, the harness's warm-up (d itself when it has one duration).
func timedMedian(d []time.Duration) time.Duration {
	return medianDuration(d[min(1, len(d)-1):])
}

// medianDuration is the median of d (0 for none).
func medianDuration(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
