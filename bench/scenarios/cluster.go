package scenarios

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/geostat-engine/geostat/bench/harness"
	"github.com/geostat-engine/geostat/geostat/synthetic"
	"github.com/geostat-engine/geostat/internal/cputime"
	"github.com/geostat-engine/geostat/tbsim"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/nats-io/nats.go"
)

// clusterQueueShards is the number of shards per run of cluster-queue, and
// clusterQueueBlob the size of each shard's result.
const (
	clusterQueueShards = 256
	clusterQueueBlob   = 4 << 10
)

func clusterQueue() harness.Scenario {
	return harness.Scenario{
		Name: "cluster-queue",
		Description: fmt.Sprintf("queue overhead per shard on an embedded NATS JetStream server (worker/cluster): submit %d shards, "+
			"one in-process consumer fetches each, stores a %d KiB result in the Object Store, creates the done record and acks",
			clusterQueueShards, clusterQueueBlob>>10),
		Setup: setupClusterQueue,
	}
}

func clusterAssemble() harness.Scenario {
	return harness.Scenario{
		Name: "cluster-assemble",
		Description: "assembly throughput (worker/cluster/shard): read the shards of a simulation ensemble from the " +
			"JetStream Object Store (SHA-256 checked) and write the zstd Parquet ensemble tile by tile, one shard held at a time",
		Setup: setupClusterAssemble,
	}
}

// embeddedNATS starts an embedded server in a temporary directory and
// connects to it in process as name; closeAll closes both and removes the
// directory.
func embeddedNATS(name string) (nc *nats.Conn, closeAll func(), err error) {
	dir, err := os.MkdirTemp("", "geostat-bench-nats-")
	if err != nil {
		return nil, nil, err
	}
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	closeAll = func() {
		if nc != nil {
			nc.Close()
		}
		ns.Shutdown()
		ns.WaitForShutdown()
		os.RemoveAll(dir)
	}
	if nc, err = cluster.ConnectInProcess(ns, name); err != nil {
		closeAll()
		return nil, nil, err
	}
	return nc, closeAll, nil
}

// embeddedQueue starts an embedded server in a temporary directory and
// opens the queue on an in-process connection.
func embeddedQueue(ctx context.Context) (*cluster.Queue, func(), error) {
	nc, closeAll, err := embeddedNATS("bench")
	if err != nil {
		return nil, nil, err
	}
	q, err := cluster.Open(ctx, nc, cluster.Config{})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return q, closeAll, nil
}

// queueBlob is the result of shard key k of cluster-queue: a pure function
// of the key.
func queueBlob(k string) []byte {
	b := make([]byte, clusterQueueBlob)
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], uint64(i)*0x9e3779b97f4a7c15^uint64(len(k))<<7)
	}
	copy(b, k)
	return b
}

func setupClusterQueue(ctx context.Context, _ harness.Config) (*harness.Workload, error) {
	q, closeQ, err := embeddedQueue(ctx)
	if err != nil {
		return nil, err
	}
	wctx, stopWork := context.WithCancel(context.Background())
	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		_ = q.Work(wctx, func(_ context.Context, _ string, _ json.RawMessage, k string) ([]byte, error) {
			return queueBlob(k), nil
		}, nil)
	}()
	keys := make([]string, clusterQueueShards)
	for i := range keys {
		keys[i] = fmt.Sprintf("s%d", i)
	}
	run := 0
	var job string
	var last time.Duration
	var cpu []time.Duration // per run, the process's CPU time (server included)
	w := &harness.Workload{
		Info:  fmt.Sprintf("%d shards of %d KiB per run, 1 consumer, in-process connection, sync-always file store", clusterQueueShards, clusterQueueBlob>>10),
		Items: clusterQueueShards, Unit: "shards",
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		run++
		job = fmt.Sprintf("bench-%d", run)
		t0, c0 := time.Now(), cputime.Process()
		if err := q.Submit(ctx, job, json.RawMessage(`{}`), keys); err != nil {
			return err
		}
		st, err := q.Wait(ctx, job, nil)
		last = time.Since(t0)
		cpu = append(cpu, cputime.Process()-c0)
		if err == nil && st.Failed != "" {
			err = fmt.Errorf("job failed: %s", st.Failed)
		}
		return err
	}
	w.Check = func() error {
		st, err := q.Status(ctx, job)
		if err != nil {
			return err
		}
		if st.Done != clusterQueueShards {
			return fmt.Errorf("%d of %d shards done", st.Done, clusterQueueShards)
		}
		for _, k := range []string{keys[0], keys[clusterQueueShards/2], keys[clusterQueueShards-1]} {
			b, err := q.Result(ctx, job, k)
			if err != nil {
				return err
			}
			if !bytes.Equal(b, queueBlob(k)) {
				return fmt.Errorf("shard %s: wrong result", k)
			}
		}
		return nil
	}
	w.Details = func() map[string]float64 {
		c := timedMedian(cpu)
		return map[string]float64{
			"us_per_shard_last_run":   float64(last.Microseconds()) / clusterQueueShards,
			"cpu_us_per_shard_median": float64(c.Microseconds()) / clusterQueueShards,
		}
	}
	w.Close = func() {
		stopWork()
		<-workDone
		closeQ()
	}
	return w, nil
}

func setupClusterAssemble(ctx context.Context, cfg harness.Config) (*harness.Workload, error) {
	c, err := synthetic.New(synthetic.Simulation(cfg.Size, cfg.Seed))
	if err != nil {
		return nil, err
	}
	rows, ncol := ensembleShape(cfg.Size)
	cols := c.Ensemble(rows, ncol)
	starts, err := tbsim.RowStarts(tbsim.Input{Grid: c.Grid})
	if err != nil {
		return nil, err
	}
	total := int64(rows * ncol * 8)
	// About 5 tiles of about 2 realisation ranges each (MinTiles -1: no
	// more tiles than TileBytes asks, as in a job of many row groups).
	pl, err := shard.NewPlan(starts, ncol, 1, shard.Sizes{TileBytes: total / 5, ShardBytes: total / 10, MinTiles: -1})
	if err != nil {
		return nil, err
	}
	byKey := map[string]shard.Shard{}
	var keys []string
	for _, s := range pl.Shards {
		byKey[s.Key()] = s
		keys = append(keys, s.Key())
	}
	// The shard blobs, cut from the ensemble (the layout shard.Compute writes).
	blobOf := func(s shard.Shard) []byte {
		m := s.Hi - s.Lo
		b := make([]byte, 0, 8*m*(s.R1-s.R0))
		for r := s.R0; r < s.R1; r++ {
			for _, v := range cols[r][s.Lo:s.Hi] {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			}
		}
		return b
	}
	q, closeQ, err := embeddedQueue(ctx)
	if err != nil {
		return nil, err
	}
	const job = "bench-assemble"
	wctx, stopWork := context.WithCancel(ctx)
	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		_ = q.Work(wctx, func(_ context.Context, _ string, _ json.RawMessage, k string) ([]byte, error) {
			return blobOf(byKey[k]), nil
		}, nil)
	}()
	err = q.Submit(ctx, job, json.RawMessage(`{}`), keys)
	if err == nil {
		_, err = q.Wait(ctx, job, nil)
	}
	stopWork()
	<-workDone
	if err != nil {
		closeQ()
		return nil, err
	}
	names := objects.EnsembleColumnNames("grade", ncol)
	types := objects.Float64Types(ncol)
	// The reference: the same ensemble written in one process.
	ref, err := objects.NewTableWriter(io.Discard, types, names, nil)
	if err != nil {
		closeQ()
		return nil, err
	}
	for _, t := range pl.Tiles {
		block := make([][]float64, ncol)
		for r := range block {
			block[r] = cols[r][t.Lo:t.Hi]
		}
		if err := ref.WriteFloat64Columns(block); err != nil {
			closeQ()
			return nil, err
		}
	}
	want, err := ref.Close()
	if err != nil {
		closeQ()
		return nil, err
	}
	var got objects.Blob
	var cpu []time.Duration // per run, the process's CPU time (server included)
	w := &harness.Workload{
		Info: fmt.Sprintf("%d cells x %d realisations (%.1f MB) in %d tiles, %d shards, zstd",
			rows, ncol, float64(total)/1e6, len(pl.Tiles), len(pl.Shards)),
		Items: int64(rows), Unit: "rows",
		Counts: []harness.Count{{Name: "MB of values", PerRun: float64(total) / 1e6}},
	}
	w.Run = func(ctx context.Context, progress func(done, total int)) error {
		c0 := cputime.Process()
		defer func() { cpu = append(cpu, cputime.Process()-c0) }()
		tw, err := objects.NewTableWriter(io.Discard, types, names, nil)
		if err != nil {
			return err
		}
		done := 0
		var buf []byte // Assemble holds one blob at a time
		err = shard.Assemble(ctx, pl, []*objects.TableWriter{tw}, func(ctx context.Context, s shard.Shard) ([]byte, error) {
			b, err := q.ResultInto(ctx, job, s.Key(), buf)
			if err == nil {
				buf = b
			}
			if progress != nil {
				done++
				progress(done, len(pl.Shards))
			}
			return b, err
		})
		if err != nil {
			return err
		}
		got, err = tw.Close()
		return err
	}
	w.Check = func() error {
		if got != want {
			return fmt.Errorf("assembled file %+v differs from the single-process one %+v", got, want)
		}
		return nil
	}
	w.Details = func() map[string]float64 {
		c := timedMedian(cpu)
		return map[string]float64{"cpu_s_median": c.Seconds(), "mb_per_cpu_s": float64(total) / 1e6 / c.Seconds()}
	}
	w.Close = closeQ
	return w, nil
}
