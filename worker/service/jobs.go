package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
)

// openJobs opens the job records and queue in JetStream.
func (m *clusterMember) openJobs(o ClusterOptions) (*jskv.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := jskv.Open(ctx, m.nc, jskv.Config{AckWait: o.JobAckWait, Replicas: o.Replicas})
	if err != nil {
		return nil, fmt.Errorf("opening the job records and queue: %w", err)
	}
	return st, nil
}

// rebuild is the jobs.Options.Rebuild of the worker: the Func it returns
// waits until the compute routes are registered (a job may be taken from
// the queue while the worker starts), then prepares and runs the task
// from its queued request.
func (s *Service) rebuild(rec jobs.Record, request []byte) (jobs.Func, error) {
	return func(ctx context.Context, progress func(int, string)) (any, error) {
		select {
		case <-s.registered:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		fn, err := s.rebuilder(rec, request)
		if err != nil {
			return nil, err
		}
		return fn(ctx, progress)
	}, nil
}

// workerIDFile keeps the worker's name in the job records (jobs.Options.ID),
// the same across restarts over one data directory.
const workerIDFile = "worker-id"

// workerID reads the worker's id from the data directory, creating it the
// first time.
func workerID(dataDir string) (string, error) {
	p := filepath.Join(dataDir, workerIDFile)
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading the worker id: %w", err)
	}
	var r [12]byte
	_, _ = rand.Read(r[:])
	host, _ := os.Hostname()
	id := "w-" + hex.EncodeToString(r[:])
	if host != "" {
		id = host + "-" + hex.EncodeToString(r[:6])
	}
	if err := atomicfile.Write(dataDir, p, []byte(id+"\n"), nil); err != nil {
		return "", fmt.Errorf("writing the worker id: %w", err)
	}
	return id, nil
}
