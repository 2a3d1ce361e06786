package jskv

import (
	"context"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/workq"
	"github.com/geostat-engine/geostat/worker/jobs"
)

// The queue half of the Store: the shared work queue (package workq) of
// the jobs, one message a job with its request, and the jobs' cancel
// requests.

// Kind is the kind of the messages of the job queue (workq.KindHeader).
const Kind = "job"

// Publish queues a job with its request. Publishing the same job again
// within the Duplicates window queues it once.
func (s *Store) Publish(ctx context.Context, id string, request []byte) error {
	if _, err := recKey(id); err != nil {
		return err
	}
	return s.wq.Publish(ctx, Kind, id, request)
}

// Next waits for the next queued job until ctx ends (each pull request
// lasts at most 5 s, so that a worker that stops leaves none behind for
// long).
func (s *Store) Next(ctx context.Context) (jobs.Delivery, error) {
	l, err := s.wq.Next(ctx)
	if err != nil {
		return nil, err
	}
	return delivery{l}, nil
}

// delivery is a job taken from the queue: a workq lease.
type delivery struct{ l *workq.Lease }

func (d delivery) JobID() string     { return d.l.ID }
func (d delivery) Request() []byte   { return d.l.Payload }
func (d delivery) InProgress() error { return d.l.InProgress() }

// Nak puts the job back, to be delivered again after delay. It returns
// once the server has read it (a flush of the connection), so that a
// worker putting its jobs back as it stops does not exit (or see its
// server stop) with the request unsent, leaving the job held until the
// ack deadline.
func (d delivery) Nak(delay time.Duration) error { return d.l.Nak(delay) }

// Ack waits for the server's confirmation, so that a finished job is not
// delivered again.
func (d delivery) Ack() error { return d.l.Ack(context.Background()) }

// RequestCancel records a cancel request for the worker running the job.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	if _, err := cancelKey(id); err != nil {
		return err
	}
	return s.wq.RequestCancel(ctx, id, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
}

// WatchCancels passes every cancel request, past and new, to f.
func (s *Store) WatchCancels(ctx context.Context, f func(id string)) error {
	return s.wq.WatchCancels(ctx, f)
}

// ClearCancel forgets a job's cancel request.
func (s *Store) ClearCancel(ctx context.Context, id string) error {
	if _, err := cancelKey(id); err != nil {
		return err
	}
	return s.wq.ClearCancel(ctx, id)
}
