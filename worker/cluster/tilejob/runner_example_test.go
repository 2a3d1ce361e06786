package tilejob_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// An idw estimate onto 10,000 cells run as three tiles (cell 0, at
// distances 13.4, 71.4 and 119.7 of the data 1, 2 and 4, gets
// Σ z/d² / Σ 1/d² = 1.0698): the api worker's
// Runner submits and assembles, a Work loop (a compute worker) computes the
// tiles with a Handler reading the job's input from the same queue.
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
		_ = q.Work(wctx, (&tilejob.Handler{Inputs: q}).Compute, nil)
	}()
	defer func() { stop(); <-done }()

	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{100, 100, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	e := &tilejob.Estimation{Kind: tilejob.IDW, Power: 2,
		Coords: []float64{10, 10, 0.5, 60, 40, 0.5, 90, 80, 0.5}, Values: []float64{1, 2, 4},
		Search: neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 200, SemiMajor: 200, Minor: 200}, MaxSamples: 3},
		Target: tilejob.Target{Grid: g}}
	r := &tilejob.Runner{Queue: q, TileTargets: 4096}
	fmt.Println("sharded:", r.Sharded(e.Target.Len()))
	cols, err := r.Run(ctx, e, func(done, total int) {})
	if err != nil {
		fmt.Println(err)
		return
	}
	es, _ := tilejob.NewEstimator(e)
	whole, _ := es.Estimate(ctx, 0, e.Target.Len(), nil)
	fmt.Printf("cell 0: %.4f, equal to one process: %v\n", cols[0][0], cols[0][0] == whole[0][0] && cols[0][9999] == whole[0][9999])
	// Output:
	// sharded: true
	// cell 0: 1.0698, equal to one process: true
}
