package service

import (
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// A compute worker serves exactly the three shard kinds, with no
// catch-all: a shard of another kind fails its job (cluster.ErrUnknownKind,
// see TestShardKindRouting) instead of running under the simulation
// handler as the old prefix routing did.
func TestComputeShardKinds(t *testing.T) {
	kinds := computeShards(slog.New(slog.DiscardHandler), 1, nil)
	require.ElementsMatch(t, []string{simjob.ShardKind, tilejob.ShardKind, lwjob.ShardKind}, slices.Collect(maps.Keys(kinds)))
	require.NotContains(t, kinds, cluster.AnyKind)
	for k, h := range kinds {
		require.NotNil(t, h.Compute, k)
		require.NotNil(t, h.Estimate, k)
	}
}
