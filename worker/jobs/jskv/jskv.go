// Package jskv keeps the worker's jobs in NATS JetStream, for every api
// worker of a cluster (jobs.Shared): the job records and cancel requests
// in a key-value bucket, the queue of jobs in a work-queue stream read by
// one durable pull consumer that every api worker shares.
//
// A job message carries the job's request (what jobs.Options.Rebuild
// needs to run it on any worker); it is removed when the job is
// acknowledged, that is when it has finished, so a stored request lives
// only while its job is queued or running. A worker takes one job at a
// time, only when it has a free slot, and holds it with in-progress
// signals; a job whose worker goes silent for the ack deadline is
// delivered again to another worker (jobs.Manager then fails it as
// interrupted when it had started, or runs it when it had not).
package jskv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/geostat-engine/geostat/worker/internal/workq"
	"github.com/geostat-engine/geostat/worker/jobs"
)

// Names of the JetStream assets.
const (
	// Bucket is the key-value bucket of job records ("rec.<job>") and
	// cancel requests ("cancel.<job>").
	Bucket = "geostat_job_records"
	// Stream is the work-queue stream of queued jobs, subjects
	// "geostat_job.<job>"; Consumer is its durable pull consumer shared by
	// the api workers.
	Stream   = "GEOSTAT_JOBS"
	Consumer = "api"
	subject  = "geostat_job."
)

// Config tunes a Store; zero values take the defaults.
type Config struct {
	// Replicas of the bucket and the stream: 1 on one server (default), 3
	// or 5 on a NATS cluster of as many servers.
	Replicas int
	// AckWait is the time after which a taken job whose worker gave no
	// sign of life is delivered again (default 60 s); workers signal every
	// AckWait/3 at most.
	AckWait time.Duration
	// Duplicates is the window in which a job published twice is queued
	// once (default 10 min).
	Duplicates time.Duration
}

// Store is one process's handle on the shared job records and queue. It
// implements jobs.Shared.
type Store struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	wq  *workq.Queue
}

var _ jobs.Shared = (*Store)(nil)

// Open creates (or updates to cfg) the bucket, stream and consumer, which
// any number of processes may do at once, and returns a handle on them.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Store, error) {
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 60 * time.Second
	}
	if cfg.Duplicates <= 0 {
		cfg.Duplicates = 10 * time.Minute
	}
	wq, err := workq.Open(ctx, nc, workq.Config{
		Stream: Stream, Subject: subject[:len(subject)-1], StreamSubjects: []string{subject + "*"},
		Consumer: Consumer, Bucket: Bucket,
		Replicas: cfg.Replicas, AckWait: cfg.AckWait, Duplicates: cfg.Duplicates,
	})
	if err != nil {
		return nil, fmt.Errorf("jskv: %w", err)
	}
	return &Store{cfg: cfg, nc: nc, js: wq.JetStream(), kv: wq.KV(), wq: wq}, nil
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// key is a job's key under prefix ("rec." or "cancel."), for a valid id.
func key(prefix, id string) (string, error) {
	if !idRE.MatchString(id) {
		return "", fmt.Errorf("jskv: job id %q: want 1 to 128 letters, digits, '-' or '_'", id)
	}
	return prefix + id, nil
}

func recKey(id string) (string, error) { return key("rec.", id) }

func cancelKey(id string) (string, error) { return key("cancel.", id) }

// AckWait is the configured ack deadline.
func (s *Store) AckWait() time.Duration { return s.cfg.AckWait }

const opTimeout = 30 * time.Second

// encode renders a record as stored, without HTML escaping: the URLs of a
// result (signed URLs carry & in their query) read as they are when
// another worker serves the record, not as \u0026.
func encode(r jobs.Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Load returns every record.
func (s *Store) Load() ([]jobs.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var out []jobs.Record
	lister, err := s.kv.ListKeysFiltered(ctx, "rec.*")
	if err != nil {
		return nil, fmt.Errorf("jskv: listing records: %w", err)
	}
	defer lister.Stop()
	for k := range lister.Keys() {
		e, err := s.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("jskv: reading %s: %w", k, err)
		}
		var r jobs.Record
		if err := json.Unmarshal(e.Value(), &r); err != nil {
			return nil, fmt.Errorf("jskv: record %s: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Save creates or replaces a record.
func (s *Store) Save(r jobs.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, err := s.SaveRev(ctx, r)
	return err
}

// SaveRev creates or replaces a record and returns the revision written.
func (s *Store) SaveRev(ctx context.Context, r jobs.Record) (uint64, error) {
	k, err := recKey(r.ID)
	if err != nil {
		return 0, err
	}
	b, err := encode(r)
	if err != nil {
		return 0, fmt.Errorf("jskv: %w", err)
	}
	rev, err := s.kv.Put(ctx, k, b)
	if err != nil {
		return 0, fmt.Errorf("jskv: saving job %s: %w", r.ID, err)
	}
	return rev, nil
}

// Delete removes a record (and its history) and any cancel request left
// for the job.
func (s *Store) Delete(id string) error {
	k, err := recKey(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := s.kv.Purge(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("jskv: deleting job %s: %w", id, err)
	}
	return s.ClearCancel(ctx, id)
}

// Get reads a record.
func (s *Store) Get(ctx context.Context, id string) (jobs.Record, bool, error) {
	r, _, ok, err := s.get(ctx, id)
	return r, ok, err
}

func (s *Store) get(ctx context.Context, id string) (jobs.Record, uint64, bool, error) {
	k, err := recKey(id)
	if err != nil {
		return jobs.Record{}, 0, false, nil // no job has such an id
	}
	e, err := s.kv.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return jobs.Record{}, 0, false, nil
	}
	if err != nil {
		return jobs.Record{}, 0, false, fmt.Errorf("jskv: reading job %s: %w", id, err)
	}
	var r jobs.Record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return jobs.Record{}, 0, false, fmt.Errorf("jskv: record of job %s: %w", id, err)
	}
	return r, e.Revision(), true, nil
}

// UpdateFrom is Update for a caller that knows the record as stored at
// revision rev: f is applied to base and written if the record is still at
// rev, without reading it first (one round trip instead of two); when
// another writer came in between, or f leaves base unchanged (base may be
// stale), it falls back to Update.
func (s *Store) UpdateFrom(ctx context.Context, base jobs.Record, rev uint64, f func(*jobs.Record) error) (jobs.Record, uint64, error) {
	k, err := recKey(base.ID)
	if err != nil {
		return jobs.Record{}, 0, err
	}
	r, nrev, ok, err := s.casWrite(ctx, k, base, rev, f, false)
	if err != nil || ok {
		return r, nrev, err
	}
	return s.Update(ctx, base.ID, f)
}

// Update applies f to a record with compare and swap, retrying (at most
// 100 times) when another worker wrote it meanwhile.
func (s *Store) Update(ctx context.Context, id string, f func(*jobs.Record) error) (jobs.Record, uint64, error) {
	k, err := recKey(id)
	if err != nil {
		return jobs.Record{}, 0, err
	}
	for range 100 {
		r, rev, found, err := s.get(ctx, id)
		if err != nil {
			return jobs.Record{}, 0, err
		}
		if !found {
			return jobs.Record{}, 0, fmt.Errorf("%w: %s", jobs.ErrNotFound, id)
		}
		r, nrev, ok, err := s.casWrite(ctx, k, r, rev, f, true)
		if err != nil || ok {
			return r, nrev, err
		}
	}
	return jobs.Record{}, 0, fmt.Errorf("jskv: updating job %s: too many concurrent writers", id)
}

// casWrite applies f to r, the record stored under k at revision rev, and
// writes the result if the record is still at rev. ok is false when
// another writer came in between, and when f leaves r unchanged unless
// unchangedOK (r then is the stored record, at rev).
func (s *Store) casWrite(ctx context.Context, k string, r jobs.Record, rev uint64, f func(*jobs.Record) error, unchangedOK bool) (_ jobs.Record, _ uint64, ok bool, _ error) {
	if err := f(&r); errors.Is(err, jobs.ErrUnchanged) {
		return r, rev, unchangedOK, nil
	} else if err != nil {
		return jobs.Record{}, 0, false, err
	}
	b, err := encode(r)
	if err != nil {
		return jobs.Record{}, 0, false, fmt.Errorf("jskv: %w", err)
	}
	nrev, err := s.kv.Update(ctx, k, b, rev)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return jobs.Record{}, 0, false, nil
	}
	if err != nil {
		return jobs.Record{}, 0, false, fmt.Errorf("jskv: updating job %s: %w", r.ID, err)
	}
	return r, nrev, true, nil
}

// Watch passes every record, then every change, to f.
func (s *Store) Watch(ctx context.Context, f func(r jobs.Record, revision uint64, deleted bool)) error {
	return s.wq.Watch(ctx, "rec.*", func(e jetstream.KeyValueEntry) {
		id := e.Key()[len("rec."):]
		if e.Operation() != jetstream.KeyValuePut {
			f(jobs.Record{ID: id}, e.Revision(), true)
			return
		}
		var r jobs.Record
		if err := json.Unmarshal(e.Value(), &r); err != nil || r.ID != id {
			return // not a record of this worker's shape: ignored
		}
		f(r, e.Revision(), false)
	})
}
