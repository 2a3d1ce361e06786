package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"

	"github.com/geostat-engine/geostat/worker/jobs"
)

// JobName names the cluster job of a runner (prefix is a readable name
// only: shards are routed by the kind they are submitted with, see
// Queue.SubmitKind): after the worker job that runs it and its attempt
// (jobs.IDFrom and jobs.AttemptFrom on ctx, see AttemptJobName), so that a
// worker finding that job interrupted can cancel and forget its shards,
// else at random.
func JobName(ctx context.Context, prefix string) (string, error) {
	if id, ok := jobs.IDFrom(ctx); ok && id != "" {
		return AttemptJobName(prefix, id, jobs.AttemptFrom(ctx)), nil
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(id[:]), nil
}

// AttemptJobName is the cluster job of attempt attempt (jobs.Record.Attempts)
// of worker job id: prefix+id for the first, prefix+id+"-k" for attempt k
// > 1. A job run again after its worker stopped thus never shares a name
// with the attempt before it, whose cancel key the compute workers keep
// seeing as cancelled.
func AttemptJobName(prefix, id string, attempt int) string {
	if attempt <= 1 {
		return prefix + id
	}
	return prefix + id + "-" + strconv.Itoa(attempt)
}
