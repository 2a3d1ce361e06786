package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/cluster/natsauth"
	"github.com/geostat-engine/geostat/worker/internal/workq"
)

// Names of the JetStream assets.
const (
	// StreamName is the work-queue stream of shard messages, subjects
	// "shard.<job>.<shard>".
	StreamName = natsauth.ShardStream
	// ConsumerName is the durable pull consumer shared by compute workers.
	ConsumerName = natsauth.ShardConsumer
	// BucketName is the key-value bucket of job state: "job.<job>" (the
	// job record), "done.<job>.<shard>" (the result's SHA-256 and its
	// HMAC, see Submit),
	// "fail.<job>" (why the job failed), "cancel.<job>",
	// "big.<job>.<shard>" (why a worker refused a shard too large for it),
	// "ref.<sha256>.<job>.<shard>" (the shard's result is the object
	// <sha256>: Forget keeps an object other jobs still refer to)
	// and "key.<job>" (the job's secret, see Submit; compute credentials
	// cannot read it).
	BucketName = natsauth.ShardBucket
	// ObjectBucket is the Object Store of shard results, named by the
	// lowercase hex SHA-256 of their bytes.
	ObjectBucket = natsauth.ObjectBucket
	// DeadStreamName keeps the server's advisories of shard messages that
	// reached MaxDeliver without completing; ReaperName is the consumer
	// through which a compute worker fails their jobs.
	DeadStreamName = "GEOSTAT_SHARDS_DEAD"
	ReaperName     = "reaper"
)

// maxDeliveriesSubject is the advisory the server publishes when a shard
// message reaches MaxDeliver.
const maxDeliveriesSubject = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + StreamName + "." + ConsumerName

// Config tunes a Queue; zero values take the defaults.
type Config struct {
	// Replicas of the stream, bucket and object store: 1 for a single
	// server (default), 3 or 5 in a cluster.
	Replicas int
	// AckWait is the ack deadline of a shard message: a consumer that
	// neither acknowledges nor reports progress within it loses the shard
	// to redelivery. Default 60 s; running shards report progress every
	// AckWait/3.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of one shard message (default 5).
	MaxDeliver int
	// Duplicates is the window in which a republished shard message (same
	// job and shard) is dropped as a duplicate (default 10 min).
	Duplicates time.Duration
	// Concurrency is the number of shards one Work loop computes at once
	// (default 1). It is a setting of the process, not of the queue.
	Concurrency int
	// MaxMemory bounds the memory estimates (WorkSized's Estimator) of the
	// shards one Work loop holds at once, from the start of their
	// computation to the end of their upload; 0 means no bound. A shard
	// waits (its message kept with progress reports) until its estimate
	// fits beside the running ones; one whose estimate exceeds MaxMemory on
	// its own is handed back for another worker (see WorkSized). A setting
	// of the process, like Concurrency.
	MaxMemory int64
	// Bind is for a process holding a compute credential (package
	// natsauth): Open binds to the stream, consumer, bucket and object
	// store an api worker created, waiting until they exist, and creates
	// or changes none (Replicas, AckWait, MaxDeliver and Duplicates are
	// then those of the api worker); its Work loops do not reap shards
	// that reached MaxDeliver (an api worker does, see Reap).
	Bind bool
	// Logger gets what the queue cannot report to a caller: a fail record
	// it could not write, a job's cleanup that failed (see Cleanup), a
	// shard whose holder went silent (see WaitShards).
	// Default slog.Default().
	Logger *slog.Logger
	// WorkerID names this process in the lease records of the shards it
	// holds (see WaitShards); default "w-<host>-<pid>".
	WorkerID string
}

func (c *Config) defaults() {
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.AckWait <= 0 {
		c.AckWait = 60 * time.Second
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = 5
	}
	if c.Duplicates <= 0 {
		c.Duplicates = 10 * time.Minute
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.WorkerID == "" {
		host, _ := os.Hostname()
		c.WorkerID = fmt.Sprintf("w-%s-%d", host, os.Getpid())
	}
}

// workq is the configuration of the shard queue's work queue.
func (c Config) workq() workq.Config {
	return workq.Config{
		Stream: StreamName, Subject: "shard", Consumer: ConsumerName, Bucket: BucketName,
		Replicas: c.Replicas, AckWait: c.AckWait, MaxDeliver: c.MaxDeliver, MaxAckPending: 1024,
		Duplicates: c.Duplicates, PollWait: time.Second, Bind: c.Bind, Logger: c.Logger,
	}
}

// Queue is one process's handle on the shared shard queue, job state and
// result store.
type Queue struct {
	cfg    Config
	wq     *workq.Queue
	js     jetstream.JetStream
	stream jetstream.Stream
	kv     jetstream.KeyValue
	obs    jetstream.ObjectStore
	chunk  uint32
	keys   *keyCache
	// cleanupFailures counts the cleanups that failed (CleanupFailures).
	cleanupFailures *atomic.Uint64
}

// Open creates (or updates to cfg) the stream, consumer, bucket and object
// store, which any number of processes may do at the same time, and
// returns a handle on them.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Queue, error) {
	cfg.defaults()
	wq, err := workq.Open(ctx, nc, cfg.workq())
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	// A bound queue takes the consumer's AckWait and MaxDeliver.
	cfg.AckWait, cfg.MaxDeliver = wq.Config().AckWait, wq.Config().MaxDeliver
	q := &Queue{cfg: cfg, wq: wq, js: wq.JetStream(), stream: wq.Stream(), kv: wq.KV(), chunk: 128 << 10, keys: &keyCache{m: map[string][]byte{}}, cleanupFailures: new(atomic.Uint64)}
	// 1 MiB chunks when the server allows them (the embedded one does).
	if nc.MaxPayload() >= 2<<20 {
		q.chunk = 1 << 20
	}
	if cfg.Bind {
		return q.bind(ctx)
	}
	if _, err = q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: DeadStreamName, Subjects: []string{maxDeliveriesSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("cluster: stream %s: %w", DeadStreamName, err)
	}
	if _, err = q.js.CreateOrUpdateConsumer(ctx, DeadStreamName, jetstream.ConsumerConfig{
		Durable: ReaperName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("cluster: consumer %s: %w", ReaperName, err)
	}
	q.obs, err = q.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: ObjectBucket, Storage: jetstream.FileStorage, Replicas: cfg.Replicas})
	if err != nil {
		return nil, fmt.Errorf("cluster: object store %s: %w", ObjectBucket, err)
	}
	return q, nil
}

// bind looks up the object store an api worker created (see Config.Bind:
// the work queue is bound by workq.Open), once a second until it exists or
// ctx ends.
func (q *Queue) bind(ctx context.Context) (*Queue, error) {
	for {
		var err error
		if q.obs, err = q.js.ObjectStore(ctx, ObjectBucket); err == nil {
			return q, nil
		}
		if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, fmt.Errorf("cluster: object store %s: %w", ObjectBucket, err)
		}
		if !sleep(ctx, time.Second) {
			return nil, fmt.Errorf("%w (no api worker has created the queue yet: %w)", ctx.Err(), err)
		}
	}
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
var shardRE = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// jobRecord is the value of "job.<job>".
type jobRecord struct {
	// Kind routes the job's shards to their handler (see WorkKinds).
	Kind   string          `json:"kind,omitempty"`
	Spec   json.RawMessage `json:"spec"`
	Shards []string        `json:"shards"`
}

// Submit records a job (its spec, opaque to the queue, and its shard keys)
// and publishes one message per shard. Submitting the same job again with
// the same spec and shards is harmless: the record is kept and the
// messages are dropped as duplicates within the Duplicates window (after
// it, redelivered shards find their done records). The same job id with a
// different spec is an error. job is a token of letters, digits, '-' and
// '_'; shard keys are such tokens joined by dots.
//
// Each shard message carries the shard's token, an HMAC of its key under
// the job's secret ("key.<job>", created at the first Submit, readable by
// api credentials only); a done record holds the result's digest and an
// HMAC of it under that token, so that only a worker the shard was
// delivered to can write one that Result accepts.
func (q *Queue) Submit(ctx context.Context, job string, spec json.RawMessage, shards []string) error {
	return q.SubmitKind(ctx, "", job, spec, shards)
}

// SubmitKind is Submit of a job of kind: every shard message carries the
// kind, and a Work loop (WorkKinds) computes it with the handler of that
// kind, failing the job when it has none.
//
// When ctx ends during a Submit, the store call under way is finished
// (each call is bounded by 30 seconds) before Submit returns ctx's error:
// a record or a shard message cut off on the client's side could still
// reach the store later, after the caller's cleanup (Forget, Cancel), and
// then stay behind. So everything a failed Submit stored is in the store
// when it returns, and a cleanup after it finds it.
func (q *Queue) SubmitKind(ctx context.Context, kind, job string, spec json.RawMessage, shards []string) error {
	if !tokenRE.MatchString(job) {
		return fmt.Errorf("cluster: job id %q: want 1 to 128 letters, digits, '-' or '_'", job)
	}
	if len(shards) == 0 {
		return fmt.Errorf("cluster: job %s has no shards", job)
	}
	seen := make(map[string]bool, len(shards))
	for _, s := range shards {
		if !shardRE.MatchString(s) || seen[s] {
			return fmt.Errorf("cluster: job %s: bad or repeated shard key %q", job, s)
		}
		seen[s] = true
	}
	rec, err := json.Marshal(jobRecord{Kind: kind, Spec: spec, Shards: shards})
	if err != nil {
		return fmt.Errorf("cluster: job %s: %w", job, err)
	}
	// Each store call runs to its end (or submitWait) under a context of
	// its own; ctx is checked before each.
	call := func(f func(ctx context.Context) error) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cluster: submitting job %s: %w", job, err)
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), submitWait)
		defer cancel()
		return f(cctx)
	}
	var key []byte
	if err := call(func(ctx context.Context) (err error) {
		key, err = q.jobKey(ctx, job, true)
		return err
	}); err != nil {
		return err
	}
	if err := call(func(ctx context.Context) error {
		if _, err := q.kv.Create(ctx, "job."+job, rec); err != nil {
			if !errors.Is(err, jetstream.ErrKeyExists) {
				return fmt.Errorf("cluster: recording job %s: %w", job, err)
			}
			e, err := q.kv.Get(ctx, "job."+job)
			if err != nil {
				return fmt.Errorf("cluster: reading job %s: %w", job, err)
			}
			if !bytes.Equal(e.Value(), rec) {
				return fmt.Errorf("cluster: job %s already exists with another spec", job)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	for _, s := range shards {
		if err := call(func(ctx context.Context) error {
			if err := q.wq.Publish(ctx, kind, job+"."+s, []byte(shardToken(key, s))); err != nil {
				return fmt.Errorf("cluster: publishing shard %s of job %s: %w", s, job, err)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// submitWait bounds each of a Submit's store calls, which run to their
// end when the submitter's context ends (see SubmitKind).
const submitWait = 30 * time.Second

// Status is the state of a job.
type Status struct {
	Shards    int    // shards of the job
	Done      int    // shards with a done record
	Failed    string // why the job failed, or ""
	Cancelled bool
}

// Finished reports whether the job needs no more work.
func (s Status) Finished() bool { return s.Failed != "" || s.Cancelled || s.Done == s.Shards }

// ErrNoJob is returned for a job the queue does not know.
var ErrNoJob = errors.New("cluster: no such job")

// Status reads a job's state.
func (q *Queue) Status(ctx context.Context, job string) (Status, error) {
	var st Status
	e, err := q.kv.Get(ctx, "job."+job)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return st, fmt.Errorf("%w: %s", ErrNoJob, job)
	}
	if err != nil {
		return st, fmt.Errorf("cluster: job %s: %w", job, err)
	}
	var rec jobRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return st, fmt.Errorf("cluster: job %s record: %w", job, err)
	}
	st.Shards = len(rec.Shards)
	if f, err := q.kv.Get(ctx, "fail."+job); err == nil {
		st.Failed = string(f.Value())
	}
	if _, err := q.kv.Get(ctx, "cancel."+job); err == nil {
		st.Cancelled = true
	}
	lister, err := q.kv.ListKeysFiltered(ctx, "done."+job+".>")
	if err != nil {
		return st, fmt.Errorf("cluster: job %s done records: %w", job, err)
	}
	for range lister.Keys() {
		st.Done++
	}
	return st, nil
}

// SubmitWait submits the shards of job (see Submit), waits for them all
// (see Wait, progress getting the done shards and their total) and returns
// nil when every shard is done. When ctx ends first it cancels the cluster
// job and returns ctx's error; a failed or cancelled job is an error saying
// so.
func (q *Queue) SubmitWait(ctx context.Context, job string, spec json.RawMessage, shards []string, progress func(done, total int)) error {
	return q.SubmitWaitKind(ctx, "", job, spec, shards, progress)
}

// SubmitWaitKind is SubmitWait of a job of kind (see SubmitKind).
func (q *Queue) SubmitWaitKind(ctx context.Context, kind, job string, spec json.RawMessage, shards []string, progress func(done, total int)) error {
	return q.SubmitFollow(ctx, kind, job, spec, shards, progress, nil)
}

// SubmitFollow is SubmitWaitKind passing notice the messages of Follow
// (a shard whose compute worker went silent).
func (q *Queue) SubmitFollow(ctx context.Context, kind, job string, spec json.RawMessage, shards []string, progress func(done, total int), notice func(msg string)) error {
	if err := q.SubmitKind(ctx, kind, job, spec, shards); err != nil {
		return fmt.Errorf("submitting the shards: %w", err)
	}
	st, err := q.Status(ctx, job)
	if err == nil && !st.Finished() {
		st, err = q.follow(ctx, job, st, func(_ string, done, total int) {
			if progress != nil {
				progress(done, total)
			}
		}, notice)
	}
	if err != nil {
		if ctx.Err() != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if cerr := q.Cancel(cctx, job); cerr != nil {
				return errors.Join(ctx.Err(), fmt.Errorf("cancelling the cluster job %s: %w", job, cerr))
			}
			return ctx.Err()
		}
		return fmt.Errorf("cluster job %s: %w", job, err)
	}
	switch {
	case st.Failed != "":
		return FailedError(job, st.Failed)
	case st.Cancelled:
		return fmt.Errorf("cluster job %s was cancelled", job)
	}
	return nil
}

// Wait blocks until the job is finished (all shards done, failed or
// cancelled) or ctx ends; a job that stalls (see follow) fails, with a
// reason starting "stalled:". It follows the job's keys with one watcher
// (initial values, then updates), so it costs one message per done shard;
// progress, when not nil, is called with the number of done shards and the
// total each time it grows.
func (q *Queue) Wait(ctx context.Context, job string, progress func(done, total int)) (Status, error) {
	st, err := q.Status(ctx, job)
	if err != nil || st.Finished() {
		return st, err
	}
	return q.follow(ctx, job, st, func(_ string, done, total int) {
		if progress != nil {
			progress(done, total)
		}
	}, nil)
}

// WaitShards is Wait calling each with every shard's key as its done
// record appears (those done before the call too), with the number of done
// shards and the total: an assembler starts on the first tiles while the
// others are still being computed.
func (q *Queue) WaitShards(ctx context.Context, job string, each func(shard string, done, total int)) (Status, error) {
	return q.Follow(ctx, job, each, nil)
}

// Follow is WaitShards passing notice (when not nil) what the job's
// progress message should say meanwhile: a shard whose compute worker went
// silent (killed, stalled or cut off) for two heartbeats, which worker held
// it since when, and when the queue delivers it again, as in
//
//	shard 3 of 10 lost: compute worker w-a silent since 12:03:04; redelivered after the 1m0s ack wait (at 12:04:04)
//
// The worker's Config.Logger logs it too (warn), whether or not notice is
// set; and once another compute worker holds the shard again, notice gets
// (and the logger logs, info) "shard 3 of 10 redelivered: compute worker
// w-b took it (delivery 2)". Compute workers refresh a lease record per shard they hold every
// AckWait/3 (see WorkKinds); Follow watches the job's lease records with
// its done records.
func (q *Queue) Follow(ctx context.Context, job string, each func(shard string, done, total int), notice func(msg string)) (Status, error) {
	st, err := q.Status(ctx, job)
	if err != nil || st.Failed != "" || st.Cancelled {
		return st, err
	}
	return q.follow(ctx, job, st, each, notice)
}

// retaken reports that a shard reported lost (lostShards) is held again,
// by the compute worker of rec.
func (q *Queue) retaken(job string, keys []string, shard string, rec workq.LeaseRecord, notice func(string)) {
	msg := fmt.Sprintf("shard %d of %d redelivered: compute worker %s took it (delivery %d)",
		slices.Index(keys, shard)+1, len(keys), rec.Holder, rec.Delivery)
	q.cfg.Logger.Info("cluster: "+msg, "job", job, "shard", shard, "holder", rec.Holder, "delivery", rec.Delivery)
	if notice != nil {
		notice(msg)
	}
}

// heldShard is what follow knows of a shard a compute worker holds.
type heldShard struct {
	rec      workq.LeaseRecord
	reported bool // its silence was reported
}

// lostShards reports the shards of held whose holders have been silent for
// longer than two heartbeats (AckWait/3 each), once per lease record.
func (q *Queue) lostShards(job string, keys []string, held map[string]*heldShard, notice func(string)) {
	beat := q.cfg.AckWait / 3
	for shard, h := range held {
		if h.reported || time.Since(h.rec.Beat) <= 2*beat {
			continue
		}
		h.reported = true
		n := slices.Index(keys, shard) + 1
		at := h.rec.Beat.Add(q.cfg.AckWait)
		msg := fmt.Sprintf("shard %d of %d lost: compute worker %s silent since %s; redelivered after the %s ack wait (at %s)",
			n, len(keys), h.rec.Holder, h.rec.Beat.UTC().Format(time.TimeOnly), q.cfg.AckWait, at.UTC().Format(time.TimeOnly))
		q.cfg.Logger.Warn("cluster: "+msg, "job", job, "shard", shard, "holder", h.rec.Holder,
			"held_since", h.rec.Since, "delivery", h.rec.Delivery, "redelivery_at", at)
		if notice != nil {
			notice(msg)
		}
	}
}

// follow watches the job's keys until it is finished, calling each for
// every new done record. It does not wait for ever: every AckWait/2 it
// checks that the job can still finish (see stalled) and fails a stalled
// job ("fail.<job>") with the reason.
func (q *Queue) follow(ctx context.Context, job string, st Status, each func(shard string, done, total int), notice func(string)) (Status, error) {
	var keys []string // the job's shard keys, in order
	if e, err := q.kv.Get(ctx, "job."+job); err == nil {
		var rec jobRecord
		if json.Unmarshal(e.Value(), &rec) == nil {
			keys = rec.Shards
		}
	}
	w, err := q.kv.WatchFiltered(ctx, []string{"done." + job + ".>", "fail." + job, "cancel." + job, "lease." + job + ".>"})
	if err != nil {
		return st, fmt.Errorf("cluster: watching job %s: %w", job, err)
	}
	defer w.Stop()
	tick := time.NewTicker(max(q.cfg.AckWait/2, 100*time.Millisecond))
	defer tick.Stop()
	// Lease records are checked more often: a silent holder is reported
	// between two heartbeats of silence and the redelivery.
	leaseTick := time.NewTicker(max(q.cfg.AckWait/10, 20*time.Millisecond))
	defer leaseTick.Stop()
	held := map[string]*heldShard{}
	sw := &stallWatch{}
	done := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("cluster: waiting for job %s: %w", job, ctx.Err())
		case <-leaseTick.C:
			q.lostShards(job, keys, held, notice)
		case <-tick.C:
			reason, err := q.stalled(ctx, job, sw)
			if err != nil || reason == "" {
				continue // alive, or a store hiccup: check again at the next tick
			}
			now, err := q.Status(ctx, job)
			if err != nil {
				return st, err
			}
			if now.Finished() {
				continue // finished meanwhile: the watcher brings the records (each is called for every done shard)
			}
			if err := q.writeFail(ctx, job, reason); err != nil {
				q.cfg.Logger.Error("cluster: cannot record why a stalled job failed", "job", job, "reason", reason, "err", err)
				now.Failed = reason
				return now, nil
			}
			if now, err = q.Status(ctx, job); err != nil { // the first reason recorded wins
				return st, err
			}
			return now, nil
		case e, ok := <-w.Updates():
			if !ok {
				return st, fmt.Errorf("cluster: watching job %s: the watcher stopped", job)
			}
			if e == nil {
				continue // end of the initial values
			}
			if shard, ok := strings.CutPrefix(e.Key(), "lease."+job+"."); ok {
				if rec, ok := workq.ParseLease(e); ok && !done["done."+job+"."+shard] {
					if prev := held[shard]; prev != nil && prev.reported && rec.Delivery != prev.rec.Delivery {
						q.retaken(job, keys, shard, rec, notice)
					}
					held[shard] = &heldShard{rec: rec}
				} else {
					delete(held, shard) // released
				}
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				continue // a deletion
			}
			switch k := e.Key(); {
			case k == "fail."+job:
				st.Failed = string(e.Value())
			case k == "cancel."+job:
				st.Cancelled = true
			case !done[k]:
				done[k] = true
				delete(held, strings.TrimPrefix(k, "done."+job+"."))
				st.Done = len(done)
				sw.idleSince = time.Time{} // progress
				each(strings.TrimPrefix(k, "done."+job+"."), st.Done, st.Shards)
			}
			if st.Finished() { // st.Done is len(done) once a done record came
				return st, nil
			}
		}
	}
}

// stallWatch is what follow remembers between checks of a job's life.
type stallWatch struct {
	idleSince time.Time // since when no shard was held, taken nor done, or zero
	delivered uint64    // the consumer's deliveries at the last check
}

// stalled returns why the job cannot finish, or "" while it can:
//   - none of its shard messages is left in the stream while the job is
//     not finished (a message acknowledged or terminated without its
//     done or fail record, or a resubmission dropped as a duplicate):
//     nothing would ever finish it;
//   - its shards are queued but no compute worker has held or taken any
//     shard of the queue (no message awaiting acknowledgement, no new
//     delivery) and none of the job's shards got done for longer than
//     AckWait × (MaxDeliver+1):
//     no compute worker is running, or its shards reached MaxDeliver and
//     no worker reaps them (see Reap).
//
// The caller reads the job's status again before failing it.
func (q *Queue) stalled(ctx context.Context, job string, sw *stallWatch) (string, error) {
	info, err := q.stream.Info(ctx, jetstream.WithSubjectFilter("shard."+job+".>"))
	if err != nil {
		return "", fmt.Errorf("cluster: job %s messages: %w", job, err)
	}
	if len(info.State.Subjects) == 0 {
		return "stalled: none of the job's shards is queued or running, yet the job has neither finished nor failed (a shard was lost)", nil
	}
	// Consumer fetches the consumer's info (CONSUMER.INFO): its cached
	// info is current, a second request (Info) would only repeat it.
	cons, err := q.js.Consumer(ctx, StreamName, ConsumerName)
	if err != nil {
		return "", fmt.Errorf("cluster: consumer: %w", err)
	}
	ci := cons.CachedInfo()
	if delivered := ci.Delivered.Consumer; ci.NumAckPending > 0 || delivered != sw.delivered {
		sw.idleSince, sw.delivered = time.Time{}, delivered // a worker holds or took a shard
		return "", nil
	}
	now := time.Now()
	if sw.idleSince.IsZero() {
		sw.idleSince = now
		return "", nil
	}
	if bound := q.cfg.AckWait * time.Duration(q.cfg.MaxDeliver+1); now.Sub(sw.idleSince) > bound {
		return fmt.Sprintf("stalled: no compute worker held a shard and none of the job's %d queued shards got done for %s (AckWait × (MaxDeliver+1)); are compute workers running?",
			len(info.State.Subjects), bound.Round(time.Second)), nil
	}
	return "", nil
}

// Cancel marks the job cancelled and purges its queued shards; running
// shards stop at their next cancellation check.
func (q *Queue) Cancel(ctx context.Context, job string) error {
	if err := q.wq.RequestCancel(ctx, job, []byte("cancelled")); err != nil {
		return fmt.Errorf("cluster: cancelling job %s: %w", job, err)
	}
	if err := q.wq.PurgeMessages(ctx, job); err != nil {
		return fmt.Errorf("cluster: purging job %s: %w", job, err)
	}
	return nil
}

// Result returns the blob of a done shard, checking its SHA-256 against the
// done record.
func (q *Queue) Result(ctx context.Context, job, shard string) ([]byte, error) {
	return q.ResultInto(ctx, job, shard, nil)
}

// ResultInto is Result reading the blob into buf's storage when it is large
// enough (a caller holding one blob at a time passes the previous one back),
// else into a new slice of the blob's size; it returns the blob.
func (q *Queue) ResultInto(ctx context.Context, job, shard string, buf []byte) ([]byte, error) {
	e, err := q.kv.Get(ctx, "done."+job+"."+shard)
	if err != nil {
		return nil, fmt.Errorf("cluster: shard %s of job %s is not done: %w", shard, job, err)
	}
	digest, _ := parseDone(e.Value())
	raw, err := hex.DecodeString(digest)
	if err != nil || len(raw) != sha256.Size {
		return nil, fmt.Errorf("cluster: done record of shard %s of job %s holds %q, not a SHA-256", shard, job, e.Value())
	}
	key, err := q.jobKey(ctx, job, false)
	if err != nil {
		return nil, err
	}
	if !validDone(e.Value(), shardToken(key, shard), job, shard) {
		return nil, fmt.Errorf("%w: shard %s of job %s", ErrForgedResult, shard, job)
	}
	r, err := q.obs.Get(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("cluster: result %s of shard %s: %w", digest, shard, err)
	}
	return readChecked(r, raw, buf, fmt.Sprintf("result %s of shard %s", digest, shard))
}

// readChecked reads the Object Store object r, whose SHA-256 is sum, to EOF
// into buf's storage when it is large enough (else into a new slice of the
// object's size) and returns it; what names the object in errors. The
// reader checks the bytes against the object's digest at EOF, so it reads
// to EOF; one spare byte of room lets the final read see it without
// growing.
func readChecked(r jetstream.ObjectResult, sum []byte, buf []byte, what string) ([]byte, error) {
	defer r.Close()
	info, err := r.Info()
	if err != nil {
		return nil, fmt.Errorf("cluster: %s: %w", what, err)
	}
	if want := objectDigest(sum); info.Digest != want {
		return nil, fmt.Errorf("cluster: %s: stored with digest %s", what, info.Digest)
	}
	if c := int(info.Size) + 1; cap(buf) < c {
		buf = make([]byte, 0, c)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: reading %s: %w", what, err)
		}
	}
}

// Digest is the lowercase hex SHA-256 of b.
func Digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// objectDigest is the Object Store's form of a SHA-256 sum.
func objectDigest(sum []byte) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum)
}

// Handler computes one shard of a job from the job's spec and returns its
// result. It must be a pure function of (spec, shard) and honour ctx.
type Handler func(ctx context.Context, job string, spec json.RawMessage, shard string) ([]byte, error)

// ErrDeterminism marks a shard completed twice with different results.
var ErrDeterminism = errors.New("determinism bug")

// ErrForgedResult marks a done record without the HMAC of the shard's
// token: not written by a worker the shard was delivered to.
var ErrForgedResult = errors.New("cluster: forged shard result (the done record does not carry the shard's token)")

// keyCache keeps the secrets of the jobs a queue has submitted or read.
type keyCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// jobKey returns the job's secret, creating it first when create is set
// (the first writer wins).
func (q *Queue) jobKey(ctx context.Context, job string, create bool) ([]byte, error) {
	q.keys.mu.Lock()
	k, ok := q.keys.m[job]
	q.keys.mu.Unlock()
	if ok {
		return k, nil
	}
	if create {
		k = make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("cluster: job %s secret: %w", job, err)
		}
		if _, err := q.kv.Create(ctx, "key."+job, k); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("cluster: recording the secret of job %s: %w", job, err)
		}
	}
	e, err := q.kv.Get(ctx, "key."+job)
	if err != nil {
		return nil, fmt.Errorf("cluster: secret of job %s: %w", job, err)
	}
	k = e.Value()
	q.keys.mu.Lock()
	if len(q.keys.m) > 256 {
		clear(q.keys.m)
	}
	q.keys.m[job] = k
	q.keys.mu.Unlock()
	return k, nil
}

// shardToken is the token of a shard: the hex HMAC-SHA256 of its key
// under the job's secret.
func shardToken(key []byte, shard string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(shard))
	return hex.EncodeToString(m.Sum(nil))
}

// doneValue is the done record of a shard whose result has SHA-256 digest:
// the digest, a space and the hex HMAC-SHA256 of "<job>.<shard>.<digest>"
// under the shard's token.
func doneValue(token, job, shard, digest string) []byte {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(job + "." + shard + "." + digest))
	return []byte(digest + " " + hex.EncodeToString(m.Sum(nil)))
}

// parseDone splits a done record into the result's digest and its HMAC.
func parseDone(v []byte) (digest, mac string) {
	d, m, _ := strings.Cut(string(v), " ")
	return d, m
}

// validDone reports whether the done record v carries the HMAC of its
// digest under the shard's token.
func validDone(v []byte, token, job, shard string) bool {
	digest, _ := parseDone(v)
	return hmac.Equal(v, doneValue(token, job, shard, digest))
}

// Work runs shards (of every kind) with h, Config.Concurrency at a time, until ctx ends
// (then it returns nil, once its running shards have returned): for each
// free slot it fetches a shard message, skips it when the job is cancelled or
// failed or the shard already has a done record with its result present,
// else computes it while reporting progress every AckWait/3, stores the
// result under its SHA-256, creates the done record and acknowledges. A
// handler error fails the job ("fail.<job>") unless ctx ended, in which
// case the message is left unacknowledged and is redelivered elsewhere
// after the ack deadline (as when the process is killed). onEvent, when not
// nil, is told what happened to each message (for logs and tests).
func (q *Queue) Work(ctx context.Context, h Handler, onEvent func(Event)) error {
	return q.WorkSized(ctx, h, nil, onEvent)
}

// Estimator returns the memory in bytes that computing a shard of a job
// needs in this process, result included. It must be cheap next to the
// computation (the spec's decoding may be shared with the Handler).
type Estimator func(ctx context.Context, job string, spec json.RawMessage, shard string) (int64, error)

// WorkSized is Work with memory admission when est is not nil and
// Config.MaxMemory is set: a shard starts only when its estimate fits
// beside the estimates of the shards this loop holds (computing or
// uploading), waiting meanwhile with its message held by progress reports;
// a shard alone above MaxMemory is never computed here: the loop records
// why in "big.<job>.<shard>" and hands the message back after two
// seconds (outcome "too large"). Another worker with room takes it on a later
// delivery; when none has taken it after MaxDeliver deliveries the job
// fails with the recorded reason. An estimator error fails the job.
func (q *Queue) WorkSized(ctx context.Context, h Handler, est Estimator, onEvent func(Event)) error {
	return q.WorkKinds(ctx, map[string]Kind{AnyKind: {Compute: h, Estimate: est}}, onEvent)
}

// AnyKind, as a key of WorkKinds' kinds, serves the shards of every kind
// missing from them: Work and WorkSized run one handler for all shards.
const AnyKind = "*"

// Kind computes (and, when Estimate is not nil, sizes: see WorkSized) the
// shards of one kind of job.
type Kind struct {
	Compute  Handler
	Estimate Estimator
}

// ErrUnknownKind marks a shard whose kind no handler of the Work loop
// serves: its job fails (it is never computed by another kind's handler).
var ErrUnknownKind = errors.New("cluster: unknown shard kind")

// WorkKinds is WorkSized computing each shard with the handler of its
// kind (SubmitKind; a shard submitted without a kind has kind ""). A shard
// of a kind missing from kinds fails its job with ErrUnknownKind (unless
// kinds has AnyKind).
//
// The loop holds each shard it computes with a lease (workq.Lease.Hold):
// every AckWait/3 it reports progress and refreshes the shard's lease
// record ("lease.<job>.<shard>": Config.WorkerID and since when), from
// which waiters tell a shard whose holder went silent (see WaitShards).
func (q *Queue) WorkKinds(ctx context.Context, kinds map[string]Kind, onEvent func(Event)) error {
	// One watcher of every job's cancel key for the life of the loop.
	cw := &cancelWatch{cancelled: map[string]bool{}, running: map[*runningShard]bool{}}
	w, err := q.kv.Watch(ctx, "cancel.>")
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("cluster: watching cancellations: %w", err)
	}
	defer w.Stop()
	go cw.follow(ctx, w)
	if !q.cfg.Bind {
		reaped := make(chan struct{})
		defer func() { <-reaped }()
		go func() { defer close(reaped); q.Reap(ctx) }()
	}
	specs := &specCache{m: map[string]json.RawMessage{}}
	// A shard holds a compute slot while its handler runs, then an upload
	// slot while its result is stored: the next shard computes meanwhile,
	// and at most Concurrency results wait or upload at once.
	slots := make(chan struct{}, q.cfg.Concurrency)
	uploads := make(chan struct{}, q.cfg.Concurrency)
	var mem *memoryGate
	if q.cfg.MaxMemory > 0 {
		mem = &memoryGate{max: q.cfg.MaxMemory, freed: make(chan struct{})}
	}
	var running sync.WaitGroup
	defer running.Wait()
	for ctx.Err() == nil {
		select { // wait for a free slot
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		l, err := q.wq.Next(ctx)
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			q.cfg.Logger.Warn("cluster: taking a shard", "err", err)
			if !sleep(ctx, 200*time.Millisecond) { // a server hiccup: retry shortly
				return nil
			}
			continue
		}
		running.Add(1)
		go func() {
			computing := true
			computed := func() { // once: the compute slot is free
				if computing {
					computing = false
					<-slots
				}
			}
			defer func() { computed(); running.Done() }()
			ev := q.process(ctx, l, kinds, mem, specs, cw, uploads, computed)
			if onEvent != nil {
				onEvent(ev)
			}
		}()
	}
	return nil
}

// specCache keeps the specs of the jobs a Work loop has seen.
type specCache struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

func (c *specCache) get(job string) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.m[job]
	return s, ok
}

func (c *specCache) put(job string, spec json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 64 { // a long-lived worker sees many jobs
		clear(c.m)
	}
	c.m[job] = spec
}

// Reap fails the jobs of shard messages that reached MaxDeliver (killed
// or stalled workers every time): it consumes the server's advisories kept
// in DeadStreamName until ctx ends, records "fail.<job>" and removes the
// dead shard message. Work loops of a queue opened without Config.Bind
// run it; an api worker that computes no shards runs it itself.
func (q *Queue) Reap(ctx context.Context) {
	cons, err := q.js.Consumer(ctx, DeadStreamName, ReaperName)
	if err != nil {
		return
	}
	for ctx.Err() == nil {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			sleep(ctx, 200*time.Millisecond) // a server hiccup: retry shortly
			continue
		}
		for msg := range batch.Messages() {
			var adv struct {
				StreamSeq  uint64 `json:"stream_seq"`
				Deliveries uint64 `json:"deliveries"`
			}
			if err := json.Unmarshal(msg.Data(), &adv); err != nil {
				_ = msg.Term()
				continue
			}
			raw, err := q.stream.GetMsg(ctx, adv.StreamSeq)
			if err != nil {
				_ = msg.Ack() // already acknowledged or purged: nothing to fail
				continue
			}
			rest, _ := strings.CutPrefix(raw.Subject, "shard.")
			job, shard, _ := strings.Cut(rest, ".")
			if _, err := q.kv.Get(ctx, "done."+job+"."+shard); err != nil {
				reason := fmt.Sprintf("shard %s: delivered %d times without completing (workers killed or stalled each time)", shard, adv.Deliveries)
				if big, err := q.kv.Get(ctx, "big."+job+"."+shard); err == nil {
					reason = string(big.Value())
				}
				if err := q.writeFail(ctx, job, reason); err != nil {
					q.cfg.Logger.Error("cluster: cannot record why a job failed; its dead shard is reaped again later",
						"job", job, "shard", shard, "reason", reason, "err", err)
					_ = msg.Nak()
					continue
				}
			}
			_ = q.stream.DeleteMsg(ctx, adv.StreamSeq)
			_ = msg.Ack()
		}
	}
}

// Event is what Work did with one shard message.
type Event struct {
	Job, Shard string
	Kind       string // the shard's kind (see SubmitKind)
	Delivery   uint64 // 1 for the first delivery
	// Outcome: "done", "duplicate" (done before, identical result),
	// "skipped" (done record found before computing), "cancelled" (the
	// job is cancelled or has already failed), "retry" (a store error,
	// such as a fail record that could not be written: the message is
	// redelivered after a second), "too large" (the shard's
	// memory estimate exceeds Config.MaxMemory: handed back for another
	// worker),
	// "abandoned" (the worker stopped without acknowledging), "failed".
	Outcome string
	Err     error
}

// cancelWatch follows the cancel keys: which jobs are cancelled, and the
// job and stop function of each running shard.
type cancelWatch struct {
	mu        sync.Mutex
	cancelled map[string]bool
	running   map[*runningShard]bool
}

// runningShard is a shard being computed.
type runningShard struct {
	job  string
	stop func()
}

func (cw *cancelWatch) follow(ctx context.Context, w jetstream.KeyWatcher) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			job := strings.TrimPrefix(e.Key(), "cancel.")
			cw.mu.Lock()
			cw.cancelled[job] = true
			for r := range cw.running {
				if r.job == job {
					r.stop()
				}
			}
			cw.mu.Unlock()
		}
	}
}

func (cw *cancelWatch) isCancelled(job string) bool {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.cancelled[job]
}

// start registers a shard being computed and returns the function that
// unregisters it; ok is false (and nothing is registered) when the job is
// already cancelled.
func (cw *cancelWatch) start(job string, stop func()) (done func(), ok bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.cancelled[job] {
		return nil, false
	}
	r := &runningShard{job: job, stop: stop}
	cw.running[r] = true
	return func() {
		cw.mu.Lock()
		delete(cw.running, r)
		cw.mu.Unlock()
	}, true
}

// process handles one shard message; once its handler has returned it
// takes an upload slot (a send on uploads, given back at the end) and then
// calls computed, which frees its compute slot.
func (q *Queue) process(ctx context.Context, msg *workq.Lease, kinds map[string]Kind, mem *memoryGate, specs *specCache, cw *cancelWatch, uploads chan struct{}, computed func()) Event {
	job, shard, _ := strings.Cut(msg.ID, ".")
	ev := Event{Job: job, Shard: shard, Kind: msg.Kind, Delivery: msg.Delivery}
	term := func(outcome string, err error) Event {
		_ = msg.Term()
		ev.Outcome, ev.Err = outcome, err
		return ev
	}
	// abandon leaves the message unacknowledged (the loop is stopping):
	// it is redelivered after the ack deadline.
	abandon := func() Event {
		ev.Outcome, ev.Err = "abandoned", ctx.Err()
		return ev
	}
	if cw.isCancelled(job) {
		return term("cancelled", nil)
	}
	if _, err := q.kv.Get(ctx, "fail."+job); err == nil {
		return term("cancelled", nil)
	}
	token := string(msg.Payload)
	if e, err := q.kv.Get(ctx, "done."+job+"."+shard); err == nil && validDone(e.Value(), token, job, shard) {
		d, _ := parseDone(e.Value())
		if _, err := q.obs.GetInfo(ctx, d); err == nil {
			_ = msg.Ack(ctx)
			ev.Outcome = "skipped"
			return ev
		}
	}
	spec, ok := specs.get(job)
	if !ok {
		e, err := q.kv.Get(ctx, "job."+job)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return term("cancelled", nil) // the job is over and forgotten
		}
		if err != nil {
			return q.fail(ctx, msg, ev, fmt.Errorf("job record: %w", err))
		}
		var rec jobRecord
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return q.fail(ctx, msg, ev, fmt.Errorf("job record: %w", err))
		}
		spec = rec.Spec
		specs.put(job, spec)
	}
	k, ok := kinds[msg.Kind]
	if !ok {
		k, ok = kinds[AnyKind]
	}
	if !ok || k.Compute == nil {
		return q.fail(ctx, msg, ev, fmt.Errorf("%w %q: this compute worker has no handler for it (is it older than the api worker that submitted the job?)", ErrUnknownKind, msg.Kind))
	}
	h, est := k.Compute, k.Estimate
	var need int64
	if mem != nil && est != nil {
		var err error
		if need, err = callEstimator(ctx, est, job, spec, shard); err != nil {
			return q.fail(ctx, msg, ev, fmt.Errorf("memory estimate: %w", err))
		}
		if need > mem.max {
			reason := fmt.Sprintf("shard %s needs an estimated %s of memory, more than the %s of the compute workers it was offered to (-max-memory); lower -shard-size or give a compute worker more memory",
				shard, formatBytes(need), formatBytes(mem.max))
			if _, err := q.kv.Put(ctx, "big."+job+"."+shard, []byte(reason)); err != nil {
				q.cfg.Logger.Warn("cluster: cannot record why a shard is too large for this worker", "job", job, "shard", shard, "err", err)
			}
			// Back after longer than a fetch's wait (1 s), so that a pull
			// request this loop leaves behind when it stops has expired.
			_ = msg.Nak(2 * time.Second)
			ev.Outcome, ev.Err = "too large", errors.New(reason)
			return ev
		}
	}

	// Compute with progress reports, stopping when the job is cancelled.
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	unregister, ok := cw.start(job, stop)
	if !ok {
		return term("cancelled", nil)
	}
	defer unregister()
	msg.Hold(cctx, q.cfg.WorkerID, q.cfg.AckWait/3)
	if mem != nil && est != nil {
		if !mem.acquire(cctx, need) {
			if cw.isCancelled(job) {
				return term("cancelled", nil)
			}
			return abandon()
		}
		defer mem.release(need)
	}
	blob, err := callHandler(cctx, h, job, spec, shard)
	if cw.isCancelled(job) {
		return term("cancelled", err)
	}
	if ctx.Err() != nil {
		return abandon()
	}
	if err != nil {
		return q.fail(ctx, msg, ev, err)
	}
	select {
	case uploads <- struct{}{}:
		defer func() { <-uploads }()
	case <-ctx.Done():
		return abandon()
	}
	computed()
	// One hash of the blob gives its name and the Object Store's digest.
	sum := sha256.Sum256(blob)
	digest, objDigest := hex.EncodeToString(sum[:]), objectDigest(sum[:])
	if info, err := q.obs.GetInfo(ctx, digest); err != nil || info.Digest != objDigest {
		info, err := q.obs.Put(ctx, jetstream.ObjectMeta{Name: digest, Opts: &jetstream.ObjectMetaOptions{ChunkSize: q.chunk}}, bytes.NewReader(blob))
		if err != nil {
			if ctx.Err() != nil {
				return abandon()
			}
			_ = msg.Nak(time.Second) // a store error: try again later
			ev.Outcome, ev.Err = "retry", err
			return ev
		}
		if info.Digest != objDigest {
			return q.fail(ctx, msg, ev, fmt.Errorf("object store digest %s for %s", info.Digest, digest))
		}
	}
	// The reference first: from now on Forget of another job naming the
	// same result keeps the object.
	if _, err := q.kv.Put(ctx, refKey(digest, job, shard), nil); err != nil {
		if ctx.Err() != nil {
			return abandon()
		}
		_ = msg.Nak(time.Second)
		ev.Outcome, ev.Err = "retry", err
		return ev
	}
	ev.Outcome = "done"
	record := doneValue(token, job, shard, digest)
	if _, err := q.kv.Create(ctx, "done."+job+"."+shard, record); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			_ = msg.Nak(time.Second)
			ev.Outcome, ev.Err = "retry", err
			return ev
		}
		e, err := q.kv.Get(ctx, "done."+job+"."+shard)
		if err != nil {
			_ = msg.Nak(time.Second)
			ev.Outcome, ev.Err = "retry", err
			return ev
		}
		switch prev, _ := parseDone(e.Value()); {
		case !validDone(e.Value(), token, job, shard):
			// Not written by a worker the shard was delivered to: replace it.
			if _, err := q.kv.Put(ctx, "done."+job+"."+shard, record); err != nil {
				_ = msg.Nak(time.Second)
				ev.Outcome, ev.Err = "retry", err
				return ev
			}
		case prev != digest:
			// The done record names prev: this result is not the shard's.
			_ = q.kv.Purge(ctx, refKey(digest, job, shard))
			return q.fail(ctx, msg, ev, fmt.Errorf("%w: shard %s completed with SHA-256 %s and %s", ErrDeterminism, shard, prev, digest))
		default:
			ev.Outcome = "duplicate"
		}
	}
	// The shard is done: acknowledge it even when the loop is stopping
	// meanwhile, so that it is not redelivered.
	_ = msg.Ack(ctx)
	return ev
}

// fail records why the job failed (the first reason wins) and terminates
// the message. A fail record that cannot be written is retried with
// backoff for at most failRecordWait (even when the loop is stopping);
// when it still cannot be written the error is logged and the message is
// handed back (outcome "retry") so that a later delivery writes it: a job
// never loses its shard without a fail record, which would leave its
// waiters without an outcome.
func (q *Queue) fail(ctx context.Context, msg *workq.Lease, ev Event, err error) Event {
	reason := fmt.Sprintf("shard %s: %v", ev.Shard, err)
	if werr := q.writeFail(ctx, ev.Job, reason); werr != nil {
		q.cfg.Logger.Error("cluster: cannot record why a job failed; its shard is handed back for another delivery to record it",
			"job", ev.Job, "shard", ev.Shard, "reason", reason, "err", werr)
		_ = msg.Nak(time.Second)
		ev.Outcome, ev.Err = "retry", fmt.Errorf("recording the failure (%w): %w", err, werr)
		return ev
	}
	_ = msg.Term()
	ev.Outcome, ev.Err = "failed", err
	return ev
}

// writeFail creates "fail.<job>" with retries (workq.Queue.WriteFail: an
// existing record, the first reason, is kept).
func (q *Queue) writeFail(ctx context.Context, job, reason string) error {
	return q.wq.WriteFail(ctx, job, reason)
}

// Forget deletes everything the cluster holds of a finished job (done,
// failed or cancelled), once its results have been assembled or are no
// longer wanted: its queued shard messages, its shard results in the
// Object Store and its records (job, done, ref, big, fail, cancel, key).
// It reads only the job's own records, so its cost is the job's, not the
// bucket's. A result another job also refers to ("ref.<sha256>.>": two
// jobs computing identical shards) is kept for that job. When a deletion
// fails Forget returns the error and keeps the job's records, so that
// Forget again finishes the work. A shard message delivered after Forget finds no job
// record and is dropped. Forget of an unknown job does nothing. Forget then
// collects the orphan chunks (CollectOrphans), so every kind of job leaves
// none behind once it is forgotten.
func (q *Queue) Forget(ctx context.Context, job string) error {
	if !tokenRE.MatchString(job) {
		return fmt.Errorf("cluster: job id %q: want 1 to 128 letters, digits, '-' or '_'", job)
	}
	if err := q.wq.PurgeMessages(ctx, job); err != nil {
		return fmt.Errorf("cluster: purging job %s: %w", job, err)
	}
	// The job's own done records (a listing filtered by the server to
	// "done.<job>.>": the cost is the job's, not the bucket's) and the
	// results they name.
	var refs []string
	mine := map[string]bool{}
	lister, err := q.kv.ListKeysFiltered(ctx, "done."+job+".>")
	if err != nil {
		return fmt.Errorf("cluster: job %s done records: %w", job, err)
	}
	for k := range lister.Keys() {
		e, err := q.kv.Get(ctx, k)
		if err != nil {
			continue // deleted meanwhile
		}
		d, _ := parseDone(e.Value())
		mine[d] = true
		refs = append(refs, refKey(d, job, strings.TrimPrefix(k, "done."+job+".")))
	}
	var errs []error
	// Drop this job's references, then delete each result no other job
	// refers to (a listing of the result's own references).
	for _, k := range refs {
		if err := q.kv.Purge(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			errs = append(errs, fmt.Errorf("record %s: %w", k, err))
		}
	}
	for d := range mine {
		if !shardRE.MatchString(d) {
			continue // not a digest: nothing stored under it
		}
		others, err := q.kv.ListKeysFiltered(ctx, "ref."+d+".>")
		if err != nil {
			errs = append(errs, fmt.Errorf("references of result %s: %w", d, err))
			continue
		}
		shared := false
		for k := range others.Keys() {
			if !strings.HasPrefix(k, "ref."+d+"."+job+".") {
				shared = true
			}
		}
		if shared {
			continue
		}
		if err := q.obs.Delete(ctx, d); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			errs = append(errs, fmt.Errorf("result %s: %w", d, err))
		}
	}
	q.keys.mu.Lock()
	delete(q.keys.m, job)
	q.keys.mu.Unlock()
	if len(errs) > 0 { // keep the job record: Forget again retries
		return fmt.Errorf("cluster: forgetting job %s: %w", job, errors.Join(errs...))
	}
	// The job's records, each listed under the job's own prefixes (the
	// lease, cancel and fail records too).
	if err := q.wq.Forget(ctx, job, "done", "big", "job", "key"); err != nil {
		return fmt.Errorf("cluster: forgetting job %s: %w", job, err)
	}
	// Chunks of uploads cut short by killed workers, which may have been
	// this job's (best effort: live uploads are spared, and a failure here
	// is not the job's).
	_, _ = q.CollectOrphans(ctx)
	return nil
}

// sleep is workq.Sleep.
func sleep(ctx context.Context, d time.Duration) bool { return workq.Sleep(ctx, d) }

// refKey is the key saying that shard of job has the result digest.
func refKey(digest, job, shard string) string { return "ref." + digest + "." + job + "." + shard }

// cleanupWait bounds a job's cleanup (Cleanup).
const cleanupWait = 30 * time.Second

// Cleanup deletes what the cluster holds of a job that is over (done,
// failed or cancelled): its inputs (DeleteInput of each digest) and then
// its messages, results and records (Forget). It runs for at most 30 s
// even when ctx has ended (a cancelled job is cleaned up too). A failure
// is not the job's: the job's outcome stands, and Cleanup logs the
// failure (Config.Logger) and counts it (CleanupFailures) instead of
// returning it (the leftovers stay until Forget of the job succeeds).
func (q *Queue) Cleanup(ctx context.Context, job string, inputs ...string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupWait)
	defer cancel()
	var errs []error
	for _, d := range inputs {
		if d == "" {
			continue
		}
		if err := q.DeleteInput(cctx, job, d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := q.Forget(cctx, job); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		q.cleanupFailures.Add(1)
		q.cfg.Logger.Warn("cluster: cleaning up a finished job failed; its outcome stands, the leftovers stay in the cluster",
			"job", job, "err", errors.Join(errs...))
	}
}

// CleanupFailures returns the number of job cleanups (Cleanup) of this
// process that failed, for a metric.
func (q *Queue) CleanupFailures() uint64 { return q.cleanupFailures.Load() }

// Pending returns the number of shard messages not yet delivered and those
// delivered but not acknowledged (the queue depth, an autoscaling signal).
func (q *Queue) Pending(ctx context.Context) (pending uint64, ackPending int, err error) {
	pending, ackPending, _, err = q.wq.Pending(ctx)
	return pending, ackPending, err
}

// CollectOrphans deletes Object Store chunks that no live object refers to
// (left by a worker killed in the middle of a put) and returns how many
// chunk subjects it purged. A put's chunks are orphans until its metadata
// is written, so chunks whose newest message is younger than the ack
// deadline (Config.AckWait) are kept: a live compute worker may be
// uploading them (a worker silent for longer has lost its shard to
// redelivery anyway). It is CollectOrphansOlderThan(ctx, AckWait).
func (q *Queue) CollectOrphans(ctx context.Context) (int, error) {
	return q.CollectOrphansOlderThan(ctx, q.cfg.AckWait)
}

// CollectOrphansOlderThan is CollectOrphans keeping the chunks written less
// than age ago (by the server's clock against this machine's: keep a margin
// for skew). Age 0 purges every orphan chunk, which is safe only when no
// put can be in progress.
func (q *Queue) CollectOrphansOlderThan(ctx context.Context, age time.Duration) (int, error) {
	objs, err := q.obs.List(ctx, jetstream.ListObjectsShowDeleted())
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, fmt.Errorf("cluster: listing objects: %w", err)
	}
	live := map[string]bool{}
	for _, o := range objs {
		if !o.Deleted {
			live[o.NUID] = true
		}
	}
	st, err := q.js.Stream(ctx, "OBJ_"+ObjectBucket)
	if err != nil {
		return 0, fmt.Errorf("cluster: object stream: %w", err)
	}
	prefix := "$O." + ObjectBucket + ".C."
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return 0, fmt.Errorf("cluster: object chunks: %w", err)
	}
	n := 0
	for subj := range info.State.Subjects {
		if live[strings.TrimPrefix(subj, prefix)] {
			continue
		}
		if age > 0 {
			last, err := st.GetLastMsgForSubject(ctx, subj)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue // purged meanwhile
			}
			if err != nil {
				return n, fmt.Errorf("cluster: last chunk of %s: %w", subj, err)
			}
			if time.Since(last.Time) < age {
				continue // maybe a put in progress
			}
		}
		if err := st.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
			return n, fmt.Errorf("cluster: purging %s: %w", subj, err)
		}
		n++
	}
	return n, nil
}

// memoryGate admits shards by memory estimate: a shard holds its estimate
// from the start of its computation to the end of its upload.
type memoryGate struct {
	max   int64
	mu    sync.Mutex
	used  int64
	freed chan struct{} // closed and replaced at each release
}

// acquire waits until need fits beside the held estimates (or nothing is
// held) and takes it; false when ctx ended first.
func (g *memoryGate) acquire(ctx context.Context, need int64) bool {
	for {
		g.mu.Lock()
		if g.used == 0 || g.used+need <= g.max {
			g.used += need
			g.mu.Unlock()
			return true
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return false
		}
	}
}

func (g *memoryGate) release(need int64) {
	g.mu.Lock()
	g.used -= need
	close(g.freed)
	g.freed = make(chan struct{})
	g.mu.Unlock()
}

// formatBytes writes a byte count in bytes, MiB or GiB.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// callHandler runs a shard's handler, turning a panic into a
// *geostat.PanicError: the shard, and so its job, fails (for good, see
// FailedError) while the loop goes on with the next shards.
func callHandler(ctx context.Context, h Handler, job string, spec json.RawMessage, shard string) (blob []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = geostat.NewPanicError(p)
		}
	}()
	return h(ctx, job, spec, shard)
}

// callEstimator runs a shard's memory estimator, turning a panic into a
// *geostat.PanicError as callHandler does.
func callEstimator(ctx context.Context, est Estimator, job string, spec json.RawMessage, shard string) (need int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = geostat.NewPanicError(p)
		}
	}()
	return est(ctx, job, spec, shard)
}

// FailedError is the error of a cluster job failed for reason (its
// "fail.<job>" record): a *geostat.PanicError when a shard panicked (the
// job then fails with 500 internal; the stack is in the log of the worker
// that ran the shard), else an error saying why.
func FailedError(job, reason string) error {
	err := fmt.Errorf("cluster job %s failed: %s", job, reason)
	if strings.Contains(reason, ": "+panicReason) {
		return &geostat.PanicError{Value: err.Error()}
	}
	return err
}

// panicReason starts the message of a *geostat.PanicError, so of the
// reason a shard that panicked records.
const panicReason = "internal error: panic: "
