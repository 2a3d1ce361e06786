package lwjob_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/geostat-engine/geostat/geostat/ensemble"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
)

// The means of an ensemble of 6 cells × 2 realisations, read in tiles of
// 2 cells: the Runner stores each tile as a job input and queues one shard
// per tile, which a Work loop (a compute worker) computes with a Handler.
func ExampleRunner() {
	dir, _ := os.MkdirTemp("", "geostat-nats-example-")
	defer os.RemoveAll(dir)
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ns.Shutdown()
	nc, _ := cluster.ConnectInProcess(ns, "example")
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := cluster.Open(ctx, nc, cluster.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, (&lwjob.Handler{Inputs: q}).Compute, nil)
	}()
	defer func() { stop(); <-done }()

	cols := [][]float64{{1, 2, 3, 4, 5, 6}, {3, 4, 5, 6, 7, 8}}
	r := &lwjob.Runner{Queue: q, Cells: 2}
	outs, err := r.Run(ctx, ensemble.Operations{Summary: true}, ensemble.NewColumnsSource(cols, 2), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(outs[2].Name, outs[2].Values)
	// Output:
	// mean [2 3 4 5 6 7]
}
