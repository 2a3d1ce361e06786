package workq_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/internal/workq"
)

func open(t *testing.T, ctx context.Context, cfg workq.Config) *workq.Queue {
	t.Helper()
	ns, err := server.NewServer(&server.Options{JetStream: true, StoreDir: t.TempDir(), DontListen: true})
	require.NoError(t, err)
	ns.Start()
	t.Cleanup(ns.Shutdown)
	require.True(t, ns.ReadyForConnections(10*time.Second))
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	if cfg.Stream == "" {
		cfg.Stream, cfg.Subject, cfg.Consumer, cfg.Bucket = "WORK", "work", "takers", "work_records"
	}
	q, err := workq.Open(ctx, nc, cfg)
	require.NoError(t, err)
	return q
}

// refusingKV refuses to create fail records while refuse is set.
type refusingKV struct {
	jetstream.KeyValue
	refuse atomic.Bool
	lists  []string
}

func (r *refusingKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if strings.HasPrefix(key, "fail.") && r.refuse.Load() {
		return 0, errors.New("refused")
	}
	return r.KeyValue.Create(ctx, key, value, opts...)
}

func (r *refusingKV) ListKeysFiltered(ctx context.Context, filters ...string) (jetstream.KeyLister, error) {
	r.lists = append(r.lists, filters...)
	return r.KeyValue.ListKeysFiltered(ctx, filters...)
}

// A message carries its kind; a lease held with Hold has a lease record
// naming its holder until it ends.
func TestKindAndLeaseRecord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := open(t, ctx, workq.Config{AckWait: 2 * time.Second})
	require.NoError(t, q.Publish(ctx, "sim", "j1.s1", []byte("p")))
	l, err := q.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "sim", l.Kind)
	require.Equal(t, "j1.s1", l.ID)
	require.EqualValues(t, 1, l.Delivery)
	l.Hold(ctx, "w-1", 100*time.Millisecond)
	e, err := q.KV().Get(ctx, "lease.j1.s1")
	require.NoError(t, err)
	rec, ok := workq.ParseLease(e)
	require.True(t, ok)
	require.Equal(t, "w-1", rec.Holder)
	require.EqualValues(t, 1, rec.Delivery)
	require.NoError(t, l.Ack(ctx))
	_, err = q.KV().Get(ctx, "lease.j1.s1")
	require.ErrorIs(t, err, jetstream.ErrKeyNotFound, "released with the lease")
}

// Fail terminates a message only once its fail record is written: when it
// cannot be, the message is handed back and its next delivery records it.
func TestFailNeverWithoutRecord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := open(t, ctx, workq.Config{AckWait: 400 * time.Millisecond})
	rk := &refusingKV{KeyValue: q.KV()}
	rk.refuse.Store(true)
	q.SetKV(rk)
	require.NoError(t, q.Publish(ctx, "k", "job", []byte("p")))
	l, err := q.Next(ctx)
	require.NoError(t, err)
	require.Error(t, l.Fail(ctx, "job", "bad"))
	rk.refuse.Store(false)
	l, err = q.Next(ctx)
	require.NoError(t, err, "handed back for redelivery")
	require.EqualValues(t, 2, l.Delivery)
	require.NoError(t, l.Fail(ctx, "job", "bad"))
	why, err := q.Failed(ctx, "job")
	require.NoError(t, err)
	require.Equal(t, "bad", why)
}

// Forget collects one item's keys and messages, listing only its own keys.
func TestForgetScoped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := open(t, ctx, workq.Config{})
	for _, id := range []string{"a", "ab"} {
		require.NoError(t, q.Publish(ctx, "k", id+".s1", nil))
		for _, k := range []string{"done." + id + ".s1", "rec." + id, "cancel." + id} {
			_, err := q.KV().Put(ctx, k, []byte("x"))
			require.NoError(t, err)
		}
	}
	_, err := q.KV().Put(ctx, "lease.a.s1", []byte("{}"))
	require.NoError(t, err)
	require.NoError(t, q.KV().Delete(ctx, "lease.a.s1")) // a marker stays in the stream
	rk := &refusingKV{KeyValue: q.KV()}
	q.SetKV(rk)
	require.NoError(t, q.Forget(ctx, "a", "done", "rec"))
	for _, f := range rk.lists {
		require.True(t, strings.HasSuffix(f, ".a.>"), "listed %s", f)
	}
	keys, err := q.Keys(ctx, ">")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"done.ab.s1", "rec.ab", "cancel.ab"}, keys)
	kvs, err := q.JetStream().Stream(ctx, "KV_work_records")
	require.NoError(t, err)
	info, err := kvs.Info(ctx, jetstream.WithSubjectFilter("$KV.work_records.>"))
	require.NoError(t, err)
	for subj := range info.State.Subjects {
		require.NotRegexp(t, `\.a(\.|$)`, subj, "nothing of a is left, deletion markers included")
	}
	require.Len(t, info.State.Subjects, 3)
	st, err := q.Stream().Info(ctx, jetstream.WithSubjectFilter("work.>"))
	require.NoError(t, err)
	require.Len(t, st.State.Subjects, 1)
	require.Contains(t, st.State.Subjects, "work.ab.s1")
}

// Cancel keys: requested, seen by a watcher (past and new), checked,
// cleared.
func TestCancelKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q := open(t, ctx, workq.Config{})
	require.NoError(t, q.RequestCancel(ctx, "a", nil))
	seen := make(chan string, 4)
	require.NoError(t, q.WatchCancels(ctx, func(id string) { seen <- id }))
	require.Equal(t, "a", <-seen)
	require.NoError(t, q.RequestCancel(ctx, "b", nil))
	select {
	case id := <-seen:
		require.Equal(t, "b", id)
	case <-ctx.Done():
		t.Fatal("the new cancel request was not seen")
	}
	ok, err := q.Cancelled(ctx, "b")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, q.ClearCancel(ctx, "b"))
	ok, err = q.Cancelled(ctx, "b")
	require.NoError(t, err)
	require.False(t, ok)
}
