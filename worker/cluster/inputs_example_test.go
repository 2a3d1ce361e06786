package cluster_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/geostat-engine/geostat/worker/cluster"
)

// A job input is stored under its SHA-256, which a spec names; a compute
// worker reads it back, checked against the digest, and the job's owner
// deletes it when the job ends.
func ExampleQueue_PutInput() {
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := cluster.Open(ctx, nc, cluster.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	digest, _ := q.PutInput(ctx, "job-1", []byte("the tile's values"))
	fmt.Println(digest == cluster.Digest([]byte("the tile's values")))
	b, _ := q.Input(ctx, "job-1", digest, nil)
	fmt.Println(string(b))
	_ = q.DeleteInput(ctx, "job-1", digest)
	_, err = q.Input(ctx, "job-1", digest, nil)
	fmt.Println(err != nil)
	// Output:
	// true
	// the tile's values
	// true
}
