package simjob_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster/internal/clustertest"
	"github.com/geostat-engine/geostat/worker/cluster/shard"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
)

// Unconditional simulations (no conditioning data) and conditional ones run
// as shards give the ensembles of the single-process simulation byte for
// byte, for several shard sizes, on one and two compute workers, with a
// worker killed in the middle of a shard (redelivered and finished
// elsewhere).
func TestRunnerShardSizesWorkersAndRedelivery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	q, nc := clustertest.Queue(t, ctx)
	cases := []struct {
		conditional bool
		sz          shard.Sizes
		workers     int
		kill        bool
	}{
		{false, shard.Sizes{TileBytes: 4 << 10, ShardBytes: 1 << 10}, 1, false},
		{false, shard.Sizes{TileBytes: 8 << 10, ShardBytes: 4 << 10}, 2, true},
		{false, shard.Sizes{}, 1, false}, // one shard
		{true, shard.Sizes{TileBytes: 6 << 10, ShardBytes: 2 << 10}, 2, false},
		{true, shard.Sizes{TileBytes: 4 << 10, ShardBytes: 1 << 10}, 1, true},
	}
	for _, tc := range cases {
		in, p := job(t, 4)
		if !tc.conditional {
			in.Coords, in.Values = nil, nil
		}
		what := fmt.Sprintf("conditional %v, sizes %+v, %d workers, kill %v", tc.conditional, tc.sz, tc.workers, tc.kill)
		pl, err := simjob.Plan(in, p, tc.sz)
		require.NoError(t, err)
		keys := make([]string, len(pl.Shards))
		for i, s := range pl.Shards {
			keys[i] = s.Key()
		}
		ws := writers(t, p)
		r := &simjob.Runner{Queue: q, Sizes: tc.sz}
		killed, evs, err := clustertest.Run(t, ctx, q, (&simjob.Handler{}).Compute, tc.workers, tc.kill, func(ctx context.Context) error {
			return r.Run(ctx, in, p, ws, nil)
		})
		require.NoError(t, err, what)
		clustertest.CheckEvents(t, keys, killed, evs)
		ref := writers(t, p)
		require.NoError(t, shard.WriteSingle(ctx, in, p, ref))
		require.Equal(t, closeAll(t, ref), closeAll(t, ws), what)
		clustertest.RequireEmpty(t, ctx, nc)
	}
}
