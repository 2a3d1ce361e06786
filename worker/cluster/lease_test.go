package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
)

// A shard is computed by the handler of its kind; a shard of a kind the
// Work loop has no handler for fails its job with a clear error, and is
// never computed by another kind's handler.
func TestShardKindRouting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second})
	var sims, tiles atomic.Int32
	kinds := map[string]cluster.Kind{
		"sim": {Compute: func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			sims.Add(1)
			return []byte("sim"), nil
		}},
		"tile": {Compute: func(context.Context, string, json.RawMessage, string) ([]byte, error) {
			tiles.Add(1)
			return []byte("tile"), nil
		}},
	}
	wctx, stop := context.WithCancel(ctx)
	worked := make(chan struct{})
	go func() { defer close(worked); _ = q.WorkKinds(wctx, kinds, nil) }()
	defer func() { stop(); <-worked }()

	require.NoError(t, q.SubmitWaitKind(ctx, "tile", "tile-a", json.RawMessage(`{}`), []string{"x", "y"}, nil))
	b, err := q.Result(ctx, "tile-a", "x")
	require.NoError(t, err)
	require.Equal(t, "tile", string(b))
	require.EqualValues(t, 2, tiles.Load())

	// A prefix is only a name: a "sim-" job of kind "tile" is a tile job.
	require.NoError(t, q.SubmitWaitKind(ctx, "tile", "sim-b", json.RawMessage(`{}`), []string{"x"}, nil))
	require.EqualValues(t, 3, tiles.Load())
	require.Zero(t, sims.Load())

	err = q.SubmitWaitKind(ctx, "nope", "sim-c", json.RawMessage(`{}`), []string{"x"}, nil)
	require.ErrorContains(t, err, `unknown shard kind "nope"`)
	require.Zero(t, sims.Load(), "an unknown kind falls to no other handler")
	require.EqualValues(t, 3, tiles.Load())
}

// A compute worker killed while it holds a shard (no ack, no more
// heartbeats): the waiter's progress notice and log name the shard, the
// silent worker, since when, and when the shard is redelivered; then the
// shard is redelivered and the job succeeds.
func TestLostShardProgress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	logs := &syncBuffer{}
	const ackWait = 3 * time.Second
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: ackWait, WorkerID: "w-test",
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	keys := []string{"a", "b", "c"}
	notices := make(chan string, 16)
	killed, evs, err := clustertest.Run(t, ctx, q, func(_ context.Context, _ string, _ json.RawMessage, key string) ([]byte, error) {
		return []byte("result of " + key), nil
	}, 1, true, func(ctx context.Context) error {
		return q.SubmitFollow(ctx, "", "job-lost", json.RawMessage(`{}`), keys, nil, func(msg string) { notices <- msg })
	})
	require.NoError(t, err, "the lost shard is redelivered and the job succeeds")
	clustertest.CheckEvents(t, keys, killed, evs)
	close(notices)
	var got []string
	for m := range notices {
		got = append(got, m)
	}
	require.Len(t, got, 2, "the lost shard, then its redelivery: %q", got)
	n := slices.Index(keys, killed) + 1
	want := regexp.MustCompile(fmt.Sprintf(`^shard %d of 3 lost: compute worker w-test silent since \d\d:\d\d:\d\d; redelivered after the 3s ack wait \(at \d\d:\d\d:\d\d\)$`, n))
	require.Regexp(t, want, got[0])
	require.Equal(t, fmt.Sprintf("shard %d of 3 redelivered: compute worker w-test took it (delivery 2)", n), got[1])
	require.Contains(t, logs.String(), "level=WARN msg=\"cluster: "+got[0]+"\"")
	b, err := q.Result(ctx, "job-lost", killed)
	require.NoError(t, err)
	require.Equal(t, "result of "+killed, string(b))
}
