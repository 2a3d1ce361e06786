package jskv_test

import (
	"context"
	"fmt"
	"os"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
)

// A job manager whose records and queue live in an embedded NATS server
// (no port): the worker's default.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "jskv-example-")
	defer os.RemoveAll(dir)
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ns.Shutdown()
	nc, err := cluster.ConnectInProcess(ns, "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	ctx := context.Background()
	st, err := jskv.Open(ctx, nc, jskv.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	double := func(request []byte) jobs.Func {
		return func(context.Context, func(int, string)) (any, error) { return string(request) + string(request), nil }
	}
	m, err := jobs.NewManager(jobs.Options{Shared: st, ID: "example-worker",
		// How a worker that did not accept a job makes its work again.
		Rebuild: func(_ jobs.Record, request []byte) (jobs.Func, error) { return double(request), nil }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Shutdown(ctx)
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "double", Request: []byte("ab")}, double([]byte("ab")))
	if err != nil {
		fmt.Println(err)
		return
	}
	done, _ := m.Wait(ctx, r.ID)
	stored, _, _ := st.Get(ctx, r.ID)
	fmt.Println(done.Status, string(done.Result), stored.Owner)
	// Output: succeeded "abab" example-worker
}
