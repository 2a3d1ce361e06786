// Package workq is the durable work queue of the worker, written once and
// used twice: for the jobs the api workers share (worker/jobs/jskv) and for
// the shards of cluster jobs (worker/cluster). It keeps, on NATS
// JetStream, a work-queue stream of typed messages read by one durable pull
// consumer and a key-value bucket of per-item records:
//
//   - a message carries its kind (header KindHeader: the receiver dispatches
//     on it, never on a prefix of the id) and its id (the subject after
//     Config.Subject, and the deduplication id);
//   - Next returns a Lease: the message held by this process, kept with
//     InProgress (or Hold, which also refreshes a lease record naming the
//     holder, see Lease.Hold and ParseLease) until Ack, Nak or Term;
//   - cancel keys ("cancel.<id>"): RequestCancel, WatchCancels, Cancelled,
//     ClearCancel;
//   - fail records ("fail.<id>"): WriteFail retries a write that fails, and
//     Lease.Fail terminates a message only once its fail record is written,
//     else leaves it for redelivery;
//   - Forget collects one item's leftovers (its queued messages and its
//     keys "<prefix>.<id>" and "<prefix>.<id>.>"), at a cost in proportion
//     to that item's keys, not to the bucket.
//
// Every wait has a deadline; the configuration (asset names, ack wait,
// deliveries, replicas, duplicate window, logger) is one Config.
package workq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KindHeader is the message header holding the kind of a message.
const KindHeader = "Geostat-Kind"

// Config names the JetStream assets of a queue and tunes it; zero values
// of the tunings take the defaults.
type Config struct {
	// Stream is the work-queue stream; Subject prefixes its subjects
	// ("<Subject>.<id>"); StreamSubjects are the stream's subject filters
	// (default Subject+".>").
	Stream, Subject string
	StreamSubjects  []string
	// Consumer is the durable pull consumer shared by the takers.
	Consumer string
	// Bucket is the key-value bucket of the records.
	Bucket string
	// Replicas of the stream, consumer and bucket (default 1).
	Replicas int
	// AckWait is the time after which a message whose holder gave no sign
	// of life is delivered again (default 60 s).
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of a message (0: unlimited).
	MaxDeliver int
	// MaxAckPending bounds the messages held at once (0: unlimited).
	MaxAckPending int
	// Duplicates is the window in which a message published twice with
	// the same id is queued once (default 10 min).
	Duplicates time.Duration
	// PollWait bounds one pull request of Next, so that a taker that stops
	// leaves no request behind for longer (default 5 s).
	PollWait time.Duration
	// Bind looks the assets up, waiting until they exist, instead of
	// creating them (a process with a restricted credential); AckWait and
	// MaxDeliver are then those of the consumer.
	Bind bool
	// Logger gets what the queue cannot report to a caller (default
	// slog.Default()).
	Logger *slog.Logger
}

func (c *Config) defaults() {
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.AckWait <= 0 {
		c.AckWait = 60 * time.Second
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = -1
	}
	if c.MaxAckPending <= 0 {
		c.MaxAckPending = -1
	}
	if c.Duplicates <= 0 {
		c.Duplicates = 10 * time.Minute
	}
	if c.PollWait <= 0 {
		c.PollWait = 5 * time.Second
	}
	if len(c.StreamSubjects) == 0 {
		c.StreamSubjects = []string{c.Subject + ".>"}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Queue is one process's handle on a work queue and its records.
type Queue struct {
	cfg    Config
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	cons   jetstream.Consumer
	kv     jetstream.KeyValue
}

// Open creates (or updates to cfg) the stream, consumer and bucket, which
// any number of processes may do at once, or binds to them (Config.Bind),
// and returns a handle on them.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Queue, error) {
	cfg.defaults()
	if cfg.Stream == "" || cfg.Subject == "" || cfg.Consumer == "" || cfg.Bucket == "" {
		return nil, errors.New("workq: Config needs Stream, Subject, Consumer and Bucket")
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("workq: jetstream: %w", err)
	}
	q := &Queue{cfg: cfg, nc: nc, js: js}
	if cfg.Bind {
		return q, q.bind(ctx)
	}
	if q.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Stream, Subjects: cfg.StreamSubjects,
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: cfg.Duplicates, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("workq: stream %s: %w", cfg.Stream, err)
	}
	if q.cons, err = js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
		Durable: cfg.Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.AckWait,
		MaxDeliver: cfg.MaxDeliver, MaxAckPending: cfg.MaxAckPending, Replicas: cfg.Replicas,
	}); err != nil {
		return nil, fmt.Errorf("workq: consumer %s: %w", cfg.Consumer, err)
	}
	if q.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.Bucket, Storage: jetstream.FileStorage, Replicas: cfg.Replicas}); err != nil {
		return nil, fmt.Errorf("workq: bucket %s: %w", cfg.Bucket, err)
	}
	return q, nil
}

// bind looks the assets up once a second until they all exist or ctx ends.
func (q *Queue) bind(ctx context.Context) error {
	for {
		err := q.lookup(ctx)
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrStreamNotFound) && !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrBucketNotFound) {
			return err
		}
		if !Sleep(ctx, time.Second) {
			return fmt.Errorf("%w (the queue has not been created yet: %w)", ctx.Err(), err)
		}
	}
}

func (q *Queue) lookup(ctx context.Context) (err error) {
	if q.stream, err = q.js.Stream(ctx, q.cfg.Stream); err != nil {
		return fmt.Errorf("workq: stream %s: %w", q.cfg.Stream, err)
	}
	if q.cons, err = q.js.Consumer(ctx, q.cfg.Stream, q.cfg.Consumer); err != nil {
		return fmt.Errorf("workq: consumer %s: %w", q.cfg.Consumer, err)
	}
	if w := q.cons.CachedInfo().Config.AckWait; w > 0 {
		q.cfg.AckWait = w
	}
	if n := q.cons.CachedInfo().Config.MaxDeliver; n != 0 {
		q.cfg.MaxDeliver = n
	}
	if q.kv, err = q.js.KeyValue(ctx, q.cfg.Bucket); err != nil {
		return fmt.Errorf("workq: bucket %s: %w", q.cfg.Bucket, err)
	}
	return nil
}

// Config returns the queue's configuration, defaults applied (and, for a
// bound queue, the consumer's AckWait and MaxDeliver).
func (q *Queue) Config() Config { return q.cfg }

// JetStream returns the queue's JetStream context.
func (q *Queue) JetStream() jetstream.JetStream { return q.js }

// Stream returns the queue's stream.
func (q *Queue) Stream() jetstream.Stream { return q.stream }

// KV returns the queue's bucket.
func (q *Queue) KV() jetstream.KeyValue { return q.kv }

// SetKV replaces the queue's bucket (tests wrap it to make writes fail).
func (q *Queue) SetKV(kv jetstream.KeyValue) { q.kv = kv }

// Publish queues a message of kind for id (the subject "<Subject>.<id>",
// and the deduplication id: publishing the same id again within the
// Duplicates window queues it once).
func (q *Queue) Publish(ctx context.Context, kind, id string, payload []byte) error {
	msg := nats.NewMsg(q.cfg.Subject + "." + id)
	msg.Data = payload
	if kind != "" {
		msg.Header.Set(KindHeader, kind)
	}
	if _, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id)); err != nil {
		return fmt.Errorf("workq: queueing %s: %w", id, err)
	}
	return nil
}

// Next waits for the next message until ctx ends, one pull request of at
// most PollWait at a time. A message received as ctx ends is put back.
func (q *Queue) Next(ctx context.Context) (*Lease, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fctx, cancel := context.WithTimeout(ctx, q.cfg.PollWait)
		msg, err := q.cons.Next(jetstream.FetchContext(fctx))
		cancel()
		if dl, ok := ctx.Deadline(); ok && err != nil && !time.Now().Before(dl) {
			return nil, context.DeadlineExceeded
		}
		if ctx.Err() != nil {
			if msg != nil {
				_ = msg.Nak()
			}
			return nil, ctx.Err()
		}
		if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("workq: taking from %s: %w", q.cfg.Stream, err)
		}
		return q.lease(msg), nil
	}
}

func (q *Queue) lease(msg jetstream.Msg) *Lease {
	l := &Lease{q: q, msg: msg, ID: strings.TrimPrefix(msg.Subject(), q.cfg.Subject+"."), Payload: msg.Data()}
	if h := msg.Headers(); h != nil {
		l.Kind = h.Get(KindHeader)
	}
	if md, err := msg.Metadata(); err == nil {
		l.Delivery = md.NumDelivered
	}
	return l
}

// opTimeout bounds one acknowledgement or flush.
const opTimeout = 30 * time.Second

// Lease is a message this process holds, until Ack, Nak, Term or Fail (or
// until it goes silent for AckWait: the message is then delivered again).
type Lease struct {
	q        *Queue
	msg      jetstream.Msg
	Kind     string // the message's kind ("" when published without one)
	ID       string // the subject after Config.Subject
	Payload  []byte
	Delivery uint64 // 1 for the first delivery
	stopHold func() // ends Hold's heartbeats and waits for them, or nil
}

// InProgress tells the queue the message is still held.
func (l *Lease) InProgress() error { return l.msg.InProgress() }

// Ack removes the message, waiting for the server's confirmation (at most
// 30 s) so that a finished item is not delivered again.
func (l *Lease) Ack(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	l.release(ctx)
	return l.msg.DoubleAck(ctx)
}

// Nak puts the message back, to be delivered again after delay, and
// returns once the server has read it (a flush, at most 30 s), so that a
// process putting its messages back as it stops does not leave them held
// until the ack deadline.
func (l *Lease) Nak(delay time.Duration) error {
	l.release(context.Background())
	var err error
	if delay <= 0 {
		err = l.msg.Nak()
	} else {
		err = l.msg.NakWithDelay(delay)
	}
	if err != nil || l.q.nc == nil {
		return err
	}
	return l.q.nc.FlushTimeout(opTimeout)
}

// Term removes the message for good, without a record of why: see Fail.
func (l *Lease) Term() error {
	l.release(context.Background())
	return l.msg.Term()
}

// Fail records reason as the fail record of job (WriteFail, the first
// reason wins) and then terminates the message. When the record cannot be
// written the message is put back (delivered again after a second, to
// record it then) and the error returned: a message is never terminated
// without its record.
func (l *Lease) Fail(ctx context.Context, job, reason string) error {
	if err := l.q.WriteFail(ctx, job, reason); err != nil {
		l.q.cfg.Logger.Error("workq: cannot record why an item failed; its message is handed back for another delivery to record it",
			"id", job, "reason", reason, "err", err)
		_ = l.Nak(time.Second)
		return err
	}
	return l.Term()
}

// LeaseRecord is the value of "lease.<id>" while a holder holds a message
// (Lease.Hold).
type LeaseRecord struct {
	Holder   string    `json:"holder"`
	Since    time.Time `json:"since"`
	Delivery uint64    `json:"delivery"`
	// Beat is the time of the last heartbeat: the server's time of the
	// record's last write (ParseLease), not the holder's clock.
	Beat time.Time `json:"-"`
}

// Hold keeps the message held until ctx ends or the lease ends (Ack, Nak,
// Term): every `every` it reports progress and rewrites the lease record
// "lease.<id>" naming holder, so that a waiter sees who holds what and
// since when it is silent (a watcher of "lease.<id>" reads it with ParseLease). The record is deleted when the
// lease ends.
func (l *Lease) Hold(ctx context.Context, holder string, every time.Duration) {
	rec, _ := json.Marshal(LeaseRecord{Holder: holder, Since: time.Now().UTC(), Delivery: l.Delivery})
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	l.stopHold = func() { cancel(); <-stopped }
	beat := func() {
		_ = l.msg.InProgress()
		pctx, cancel := context.WithTimeout(ctx, every)
		if _, err := l.q.kv.Put(pctx, "lease."+l.ID, rec); err != nil && ctx.Err() == nil {
			l.q.cfg.Logger.Warn("workq: cannot refresh a lease record", "id", l.ID, "err", err)
		}
		cancel()
	}
	beat()
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
}

// release deletes the lease record of a held message.
func (l *Lease) release(ctx context.Context) {
	if l.stopHold == nil {
		return
	}
	l.stopHold()
	l.stopHold = nil
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = l.q.kv.Delete(dctx, "lease."+l.ID)
}

// ParseLease reads a lease record entry of the bucket (a "lease.<id>"
// key), its Beat the server's time of the write.
func ParseLease(e jetstream.KeyValueEntry) (LeaseRecord, bool) {
	var r LeaseRecord
	if e == nil || e.Operation() != jetstream.KeyValuePut || json.Unmarshal(e.Value(), &r) != nil {
		return r, false
	}
	r.Beat = e.Created()
	return r, true
}

// RequestCancel records a cancel request ("cancel.<id>", value why).
func (q *Queue) RequestCancel(ctx context.Context, id string, why []byte) error {
	if _, err := q.kv.Put(ctx, "cancel."+id, why); err != nil {
		return fmt.Errorf("workq: requesting the cancellation of %s: %w", id, err)
	}
	return nil
}

// Cancelled reports whether id has a cancel request.
func (q *Queue) Cancelled(ctx context.Context, id string) (bool, error) {
	_, err := q.kv.Get(ctx, "cancel."+id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("workq: cancel request of %s: %w", id, err)
	}
	return true, nil
}

// ClearCancel forgets a cancel request.
func (q *Queue) ClearCancel(ctx context.Context, id string) error {
	if err := q.kv.Purge(ctx, "cancel."+id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("workq: clearing the cancel request of %s: %w", id, err)
	}
	return nil
}

// WatchCancels passes the id of every cancel request, past and new, to f
// (on one goroutine) until ctx ends. It returns once the requests stored
// at the call have been passed, or with an error after 30 s.
func (q *Queue) WatchCancels(ctx context.Context, f func(id string)) error {
	return q.Watch(ctx, "cancel.>", func(e jetstream.KeyValueEntry) {
		if e.Operation() == jetstream.KeyValuePut {
			f(strings.TrimPrefix(e.Key(), "cancel."))
		}
	})
}

// Watch runs f on the entries of a key filter of the bucket until ctx
// ends, returning once the values stored at the call have been passed (or
// with an error after 30 s).
func (q *Queue) Watch(ctx context.Context, filter string, f func(jetstream.KeyValueEntry)) error {
	w, err := q.kv.Watch(ctx, filter)
	if err != nil {
		return fmt.Errorf("workq: watching %s: %w", filter, err)
	}
	ready := make(chan struct{})
	markReady := sync.OnceFunc(func() { close(ready) })
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				markReady()
				return
			case e, ok := <-w.Updates():
				if !ok {
					markReady()
					return
				}
				if e == nil { // the stored values have all been passed
					markReady()
					continue
				}
				f(e)
			}
		}
	}()
	t := time.NewTimer(opTimeout)
	defer t.Stop()
	select {
	case <-ready:
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("workq: watching %s: the stored values did not arrive in %s", filter, opTimeout)
	}
}

// failRecordWait bounds the attempts of writing one fail record.
const failRecordWait = 10 * time.Second

// WriteFail creates "fail.<id>" (an existing one, the first reason, is
// kept), retrying with backoff from 50 ms to 1 s for at most
// min(10 s, AckWait/2), whether or not ctx has ended.
func (q *Queue) WriteFail(ctx context.Context, id, reason string) error {
	wait := min(failRecordWait, q.cfg.AckWait/2)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		_, err := q.kv.Create(wctx, "fail."+id, []byte(reason))
		if err == nil || errors.Is(err, jetstream.ErrKeyExists) {
			return nil
		}
		if !Sleep(wctx, backoff) {
			return fmt.Errorf("workq: recording why %s failed (for %s): %w", id, wait, err)
		}
		backoff = min(2*backoff, time.Second)
	}
}

// Failed returns the fail record of id, or "".
func (q *Queue) Failed(ctx context.Context, id string) (string, error) {
	e, err := q.kv.Get(ctx, "fail."+id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("workq: fail record of %s: %w", id, err)
	}
	return string(e.Value()), nil
}

// PurgeMessages removes the queued messages of id and of the ids under it
// ("<id>.…").
func (q *Queue) PurgeMessages(ctx context.Context, id string) error {
	for _, subj := range []string{q.cfg.Subject + "." + id, q.cfg.Subject + "." + id + ".>"} {
		if err := q.stream.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
			return fmt.Errorf("workq: purging %s: %w", subj, err)
		}
	}
	return nil
}

// Keys lists the keys of the bucket matching filter (a listing filtered by
// the server: its cost is that of the matching keys).
func (q *Queue) Keys(ctx context.Context, filter string) ([]string, error) {
	lister, err := q.kv.ListKeysFiltered(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("workq: listing %s: %w", filter, err)
	}
	defer lister.Stop()
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	return keys, nil
}

// Forget collects the leftovers of id: its queued messages (and those of
// the ids under it), its lease records, and for each prefix its keys
// "<prefix>.<id>" and "<prefix>.<id>.>", "cancel" and "fail" included. The
// keys go by a purge of their subjects in the bucket's stream, markers of
// deleted keys included: the cost is id's keys, not the bucket's. It goes
// on after an error and returns them all.
func (q *Queue) Forget(ctx context.Context, id string, prefixes ...string) error {
	var errs []error
	if err := q.PurgeMessages(ctx, id); err != nil {
		errs = append(errs, err)
	}
	kvs, err := q.js.Stream(ctx, "KV_"+q.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("workq: forgetting %s: bucket stream: %w", id, errors.Join(append(errs, err)...))
	}
	for _, p := range append([]string{"lease", "cancel", "fail"}, prefixes...) {
		for _, subj := range []string{"$KV." + q.cfg.Bucket + "." + p + "." + id, "$KV." + q.cfg.Bucket + "." + p + "." + id + ".>"} {
			if err := kvs.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
				errs = append(errs, fmt.Errorf("workq: records %s: %w", subj, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("workq: forgetting %s: %w", id, errors.Join(errs...))
	}
	return nil
}

// Pending returns the messages not yet delivered and those delivered but
// not acknowledged, and the consumer's count of deliveries.
func (q *Queue) Pending(ctx context.Context) (pending uint64, ackPending int, delivered uint64, err error) {
	c, err := q.js.Consumer(ctx, q.cfg.Stream, q.cfg.Consumer)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("workq: consumer %s: %w", q.cfg.Consumer, err)
	}
	ci := c.CachedInfo()
	return ci.NumPending, ci.NumAckPending, ci.Delivered.Consumer, nil
}

// Sleep waits d, or less when ctx ends first; it reports whether ctx is
// still alive (the retry loops' pause between attempts).
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
