// Package clustertest runs cluster jobs in tests: an embedded NATS server
// in the test process, Work loops as compute workers, one of which can be
// killed in the middle of its first shard so that the shard is redelivered.
package clustertest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
)

// AckWait is the ack deadline of the test queues: a killed worker's shard
// is redelivered after it.
const AckWait = 2 * time.Second

// Queue starts an embedded server with its state in a temporary directory
// and opens a queue on an in-process connection, ack deadline AckWait.
func Queue(t testing.TB, ctx context.Context) (*cluster.Queue, *nats.Conn) {
	t.Helper()
	return QueueConfig(t, ctx, cluster.Config{AckWait: AckWait})
}

// QueueConfig is Queue with the queue's configuration cfg.
func QueueConfig(t testing.TB, ctx context.Context, cfg cluster.Config) (*cluster.Queue, *nats.Conn) {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	nc, err := cluster.ConnectInProcess(ns, "test")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	q, err := cluster.Open(ctx, nc, cfg)
	require.NoError(t, err)
	return q, nc
}

// Events collects Work events.
type Events struct {
	mu  sync.Mutex
	all []cluster.Event
}

func (e *Events) add(ev cluster.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// List returns the events so far.
func (e *Events) List() []cluster.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]cluster.Event(nil), e.all...)
}

// Run runs a job: run submits, follows and assembles it (a Runner's Run),
// while workers Work loops compute its shards with h. With kill, a first
// Work loop takes one shard and hangs in it until it is stopped (a compute
// worker killed mid-shard: no ack), which happens once it has taken the
// shard; the workers loops start only then, so the killed shard is
// redelivered to one of them after the ack deadline. It returns the key of
// the killed shard ("" without kill), the events of the workers loops and
// run's error. Every wait is bounded by ctx.
func Run(t testing.TB, ctx context.Context, q *cluster.Queue, h cluster.Handler, workers int, kill bool, run func(ctx context.Context) error) (killed string, evs []cluster.Event, err error) {
	t.Helper()
	runErr := make(chan error, 1)
	if kill {
		kctx, stop := context.WithCancel(ctx)
		taken := make(chan string, 1)
		kdone := make(chan struct{})
		go func() {
			defer close(kdone)
			_ = q.Work(kctx, func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
				select {
				case taken <- key:
				default:
				}
				<-ctx.Done()
				return nil, ctx.Err()
			}, nil)
		}()
		go func() { runErr <- run(ctx) }()
		select {
		case killed = <-taken:
		case <-ctx.Done():
			t.Fatal("the worker to kill took no shard")
		}
		stop()
		<-kdone
	} else {
		go func() { runErr <- run(ctx) }()
	}
	ev := &Events{}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = q.Work(wctx, h, ev.add)
		}()
	}
	select {
	case err = <-runErr:
	case <-ctx.Done():
		t.Fatal("the job did not finish in time")
	}
	stop()
	wg.Wait()
	return killed, ev.List(), err
}

// CheckEvents checks the events of a run: every shard of keys done exactly
// once without error, the killed shard (when not "") on its second
// delivery, the others on their first.
func CheckEvents(t testing.TB, keys []string, killed string, evs []cluster.Event) {
	t.Helper()
	done := map[string]int{}
	for _, e := range evs {
		require.NoError(t, e.Err, "shard %s", e.Shard)
		require.Equal(t, "done", e.Outcome, "shard %s", e.Shard)
		done[e.Shard]++
		if e.Shard == killed {
			require.Equal(t, uint64(2), e.Delivery, "the killed shard %s is a redelivery", killed)
		} else {
			require.Equal(t, uint64(1), e.Delivery, "shard %s", e.Shard)
		}
	}
	require.Len(t, done, len(keys))
	for _, k := range keys {
		require.Equal(t, 1, done[k], "shard %s computed once", k)
	}
}

// RequireEmpty checks that the cluster holds nothing of finished jobs: no
// object and no chunk in the result store, no key in the job bucket.
func RequireEmpty(t testing.TB, ctx context.Context, nc *nats.Conn) {
	t.Helper()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	obs, err := js.ObjectStore(ctx, cluster.ObjectBucket)
	require.NoError(t, err)
	_, err = obs.List(ctx)
	require.ErrorIs(t, err, jetstream.ErrNoObjectsFound)
	st, err := js.Stream(ctx, "OBJ_"+cluster.ObjectBucket)
	require.NoError(t, err)
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("$O."+cluster.ObjectBucket+".C.>"))
	require.NoError(t, err)
	require.Empty(t, info.State.Subjects)
	kv, err := js.KeyValue(ctx, cluster.BucketName)
	require.NoError(t, err)
	_, err = kv.Keys(ctx)
	require.ErrorIs(t, err, jetstream.ErrNoKeysFound)
}

// Cancel starts run with no compute worker, waits (bounded) until the job's
// shards are queued, cancels run's context and checks that run returns
// context.Canceled, that the cancel purged the queued shards and that the
// cluster keeps nothing of the job (its inputs included).
func Cancel(t testing.TB, ctx context.Context, q *cluster.Queue, nc *nats.Conn, run func(ctx context.Context) error) {
	t.Helper()
	rctx, rcancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- run(rctx) }()
	WaitQueued(t, ctx, q)
	rcancel()
	select {
	case err := <-errc:
		require.ErrorIs(t, err, context.Canceled)
	case <-ctx.Done():
		t.Fatal("the run did not return after its context ended")
	}
	pending, _, err := q.Pending(ctx)
	require.NoError(t, err)
	require.Zero(t, pending, "the cancel purged the queued shards")
	RequireEmpty(t, ctx, nc)
}

// WaitQueued waits until the queue holds a shard message not yet
// delivered, polling every millisecond for at most 10 seconds.
func WaitQueued(t testing.TB, ctx context.Context, q *cluster.Queue) {
	t.Helper()
	for i := 0; ; i++ {
		pending, _, err := q.Pending(ctx)
		require.NoError(t, err)
		if pending > 0 {
			return
		}
		require.Less(t, i, 10_000, "no shard was ever queued")
		time.Sleep(time.Millisecond)
	}
}
