package workq_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/geostat-engine/geostat/worker/internal/workq"
)

// A queue of typed messages: publish, take a lease, hold it while the
// work runs, and acknowledge it.
func Example() {
	dir, _ := os.MkdirTemp("", "workq")
	defer os.RemoveAll(dir)
	ns, _ := server.NewServer(&server.Options{JetStream: true, StoreDir: dir, DontListen: true})
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		fmt.Println("server not ready")
		return
	}
	nc, _ := nats.Connect("", nats.InProcessServer(ns))
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	q, err := workq.Open(ctx, nc, workq.Config{Stream: "WORK", Subject: "work", Consumer: "takers", Bucket: "work_records", AckWait: 5 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := q.Publish(ctx, "greeting", "job-1", []byte("hello")); err != nil {
		fmt.Println(err)
		return
	}
	l, err := q.Next(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	hctx, stop := context.WithCancel(ctx)
	l.Hold(hctx, "worker-a", time.Second) // heartbeats and a lease record
	fmt.Println(l.Kind, l.ID, string(l.Payload), l.Delivery)
	stop()
	if err := l.Ack(ctx); err != nil {
		fmt.Println(err)
	}
	// Output: greeting job-1 hello 1
}
