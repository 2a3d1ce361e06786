package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/cluster"
)

// An embedded server with no listening port, a job of three shards, one
// consumer, and the results read back.
func Example() {
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
	_ = q.Submit(ctx, "upper", json.RawMessage(`{"prefix":"shard "}`), []string{"a", "b", "c"})

	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Work(wctx, func(_ context.Context, _ string, spec json.RawMessage, key string) ([]byte, error) {
			var s struct{ Prefix string }
			_ = json.Unmarshal(spec, &s)
			return []byte(strings.ToUpper(s.Prefix + key)), nil
		}, nil)
	}()
	st, err := q.Wait(ctx, "upper", nil)
	stop()
	<-done
	fmt.Println("done:", st.Done, "of", st.Shards, err)
	for _, k := range []string{"a", "b", "c"} {
		b, _ := q.Result(ctx, "upper", k)
		fmt.Println(string(b))
	}
	// Output:
	// done: 3 of 3 <nil>
	// SHARD A
	// SHARD B
	// SHARD C
}
