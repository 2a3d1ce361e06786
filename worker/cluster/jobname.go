package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/geostat-engine/geostat/worker/jobs"
)

// JobName names the cluster job of a runner (prefix routes its shards to
// the right handler): after the worker job that runs it (jobs.IDFrom on
// ctx), so that a worker finding that job interrupted can cancel and forget
// its shards (see JobNames), else at random.
func JobName(ctx context.Context, prefix string) (string, error) {
	if id, ok := jobs.IDFrom(ctx); ok && id != "" {
		return prefix + id, nil
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(id[:]), nil
}
