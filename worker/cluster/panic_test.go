package cluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/stretchr/testify/require"
)

// TestHandlerPanicFailsJob checks that a shard handler that panics fails
// its job (a reason that FailedError turns into a *geostat.PanicError, so
// the job fails with 500 internal) while the Work loop survives and goes
// on with the next shard. Before, the panic crashed the process.
func TestHandlerPanicFailsJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{AckWait: 2 * time.Second})
	const bad, good = "job-panics", "job-fine"
	require.NoError(t, q.Submit(ctx, bad, json.RawMessage(`{}`), []string{"s0"}))
	require.NoError(t, q.Submit(ctx, good, json.RawMessage(`{}`), []string{"s0"}))
	h := func(ctx context.Context, job string, spec json.RawMessage, key string) ([]byte, error) {
		if job == bad {
			var s []int
			_ = s[len(key)] // index out of range
		}
		return []byte(key), nil
	}
	ev := newEvents()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = q.Work(wctx, h, ev.add) }()
	outcomes := map[string]cluster.Event{}
	for len(outcomes) < 2 {
		select {
		case e := <-ev.ch:
			outcomes[e.Job] = e
		case <-ctx.Done():
			t.Fatal("shards not handled")
		}
	}
	stop()
	<-done
	require.Equal(t, "failed", outcomes[bad].Outcome)
	var pe *geostat.PanicError
	require.ErrorAs(t, outcomes[bad].Err, &pe, "the event carries the panic and its stack for the log")
	require.NotEmpty(t, pe.Stack)
	require.Equal(t, "done", outcomes[good].Outcome, "the loop went on after the panic")
	st, err := q.Status(ctx, bad)
	require.NoError(t, err)
	require.NotEmpty(t, st.Failed)
	require.ErrorAs(t, cluster.FailedError(bad, st.Failed), &pe, "the job fails as internal")
	require.NotErrorAs(t, cluster.FailedError(bad, "shard s0: no such input"), &pe)
}
