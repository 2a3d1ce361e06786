package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel/bmapi"
	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/cluster/lwjob"
	"github.com/geostat-engine/geostat/worker/cluster/simjob"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
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

// importDirRecords moves the job records of a worker of an earlier
// version (one JSON file per job under DATA/jobs) into the shared store,
// once: the unfinished ones failed as interrupted (503), as that worker
// would have recorded them at its start; a record the store has already
// is left as stored (an import cut short runs again from the start). The
// directory is then renamed DATA/jobs.imported. Unreadable files are
// logged and skipped.
func importDirRecords(dataDir string, st *jskv.Store, logger *slog.Logger) error {
	dir := filepath.Join(dataDir, "jobs")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("importing the job records of %s: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("importing the job records of %s: %w", dir, err)
		}
		var r jobs.Record
		if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
			logger.Warn("skipping an unreadable job record of an earlier worker", "file", e.Name(), "err", err)
			continue
		}
		if !r.Status.Finished() {
			finished := time.Now().UTC()
			r.Error = jobs.Interrupted(r.Status)
			r.Status, r.FinishedAt, r.Message = jobs.Failed, &finished, "Job failed"
		}
		if _, ok, err := st.Get(ctx, r.ID); err != nil {
			return err
		} else if ok {
			continue
		}
		if err := st.Save(r); err != nil {
			return err
		}
		n++
	}
	if err := os.Rename(dir, dir+".imported"); err != nil {
		return fmt.Errorf("importing the job records of %s: %w", dir, err)
	}
	logger.Info("imported the job records of an earlier worker into the job store", "records", n, "from", dir)
	return nil
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
		rebuild := s.rebuilder
		if rec.Topic == bmapi.Topic {
			if s.blockModels == nil {
				return nil, fmt.Errorf("job %s: this worker has no block model area", rec.ID)
			}
			rebuild = s.blockModels.Rebuild
		}
		fn, err := rebuild(rec, request)
		if err != nil {
			return nil, err
		}
		return fn(ctx, progress)
	}, nil
}

// interrupted cancels and forgets the shards, and deletes the inputs, of
// the attempt of a job found interrupted (its api worker died while it
// ran; r.Attempts is that attempt): they would otherwise keep compute
// workers busy, and the Object Store full, for a job nobody assembles. The
// job's next attempt, if any, names its cluster job after itself
// (cluster.AttemptJobName), so this never reaches it.
func (s *Service) interrupted(r jobs.Record) {
	if !s.opts.Cluster.Enabled() || s.cluster == nil || s.cluster.queue == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The runners name their cluster jobs after the worker job and its
	// attempt (cluster.JobName); one attempt runs at most one of them.
	for _, prefix := range []string{simjob.JobPrefix, tilejob.JobPrefix, lwjob.JobPrefix} {
		job := cluster.AttemptJobName(prefix, r.ID, r.Attempts)
		if err := s.cluster.queue.Cancel(ctx, job); err != nil {
			s.opts.Logger.Warn("cancelling the shards of an interrupted job", "job_id", r.ID, "cluster_job", job, "err", err)
			continue
		}
		if err := s.cluster.queue.Forget(ctx, job); err != nil {
			s.opts.Logger.Warn("forgetting the shards of an interrupted job", "job_id", r.ID, "cluster_job", job, "err", err)
		}
		if _, err := s.cluster.queue.DeleteInputs(ctx, job); err != nil {
			s.opts.Logger.Warn("deleting the inputs of an interrupted job", "job_id", r.ID, "cluster_job", job, "err", err)
		}
	}
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
