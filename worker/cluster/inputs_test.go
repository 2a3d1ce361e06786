package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
)

// Inputs are stored under the SHA-256 of their bytes, per job: read back
// equal (into a reused buffer too), stored once, not shared with another
// job's identical input nor deleted by Forget, and gone after DeleteInput.
func TestInputs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, nc := clustertest.QueueConfig(t, ctx, cluster.Config{})
	big := make([]byte, 3<<20+17) // several chunks
	for i := range big {
		big[i] = byte(i * 7)
	}
	d, err := q.PutInput(ctx, "job-a", big)
	require.NoError(t, err)
	require.Equal(t, cluster.Digest(big), d)
	again, err := q.PutInput(ctx, "job-a", big)
	require.NoError(t, err)
	require.Equal(t, d, again)
	_, err = q.PutInput(ctx, "job-b", big)
	require.NoError(t, err)
	got, err := q.Input(ctx, "job-a", d, nil)
	require.NoError(t, err)
	require.Equal(t, big, got)
	buf := make([]byte, 0, len(big)+1)
	got, err = q.Input(ctx, "job-b", d, buf)
	require.NoError(t, err)
	require.Equal(t, big, got)
	require.Equal(t, &buf[:1][0], &got[0], "read into the buffer given")

	require.NoError(t, q.Forget(ctx, "job-a"))
	_, err = q.Input(ctx, "job-a", d, nil)
	require.NoError(t, err, "Forget leaves inputs to DeleteInput")
	require.NoError(t, q.DeleteInput(ctx, "job-a", d))
	require.NoError(t, q.DeleteInput(ctx, "job-a", d), "deleting twice does nothing")
	_, err = q.Input(ctx, "job-a", d, nil)
	require.ErrorIs(t, err, cluster.ErrNoInput)
	_, err = q.Input(ctx, "job-b", d, nil)
	require.NoError(t, err, "another job's identical input is kept")
	require.NoError(t, q.DeleteInput(ctx, "job-b", d))

	_, err = q.Input(ctx, "job-b", "not-a-digest", nil)
	require.ErrorContains(t, err, "not a SHA-256")
	_, err = q.PutInput(ctx, "bad job", big)
	require.ErrorContains(t, err, "job id")
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	obs, err := js.ObjectStore(ctx, cluster.ObjectBucket)
	require.NoError(t, err)
	_, err = obs.List(ctx)
	require.ErrorIs(t, err, jetstream.ErrNoObjectsFound)
}

// DeleteInputs deletes every input of one job and no other's, not even
// those of a job whose id extends it (a later attempt "job-a-2").
func TestDeleteInputs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, _ := clustertest.QueueConfig(t, ctx, cluster.Config{})
	n, err := q.DeleteInputs(ctx, "job-a")
	require.NoError(t, err)
	require.Zero(t, n, "an empty store has nothing to delete")
	a1, err := q.PutInput(ctx, "job-a", []byte("first input"))
	require.NoError(t, err)
	a2, err := q.PutInput(ctx, "job-a", []byte("second input"))
	require.NoError(t, err)
	later, err := q.PutInput(ctx, "job-a-2", []byte("first input"))
	require.NoError(t, err)
	other, err := q.PutInput(ctx, "job-b", []byte("second input"))
	require.NoError(t, err)
	n, err = q.DeleteInputs(ctx, "job-a")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	for _, d := range []string{a1, a2} {
		_, err = q.Input(ctx, "job-a", d, nil)
		require.ErrorIs(t, err, cluster.ErrNoInput)
	}
	got, err := q.Input(ctx, "job-a-2", later, nil)
	require.NoError(t, err)
	require.Equal(t, "first input", string(got))
	got, err = q.Input(ctx, "job-b", other, nil)
	require.NoError(t, err)
	require.Equal(t, "second input", string(got))
}
