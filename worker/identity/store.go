package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultBucket is the name of the identity bucket.
const DefaultBucket = "geostat_identity"

// Config tunes a Store; zero values take the defaults.
type Config struct {
	// Bucket is the key-value bucket (default DefaultBucket).
	Bucket string
	// Replicas of the bucket: 1 on one server (default), 3 or 5 on a NATS
	// cluster of as many servers.
	Replicas int
	// Static are the read-only principals (tokens file, GEOSTAT_TOKEN, the
	// development token): tokens unique, user ids set, org keys UUIDs or
	// Any, workspace keys UUIDs or Any, roles owner, editor or viewer.
	Static []Static
	// Now is the clock (default time.Now): token expiry, invitation expiry
	// and record dates.
	Now func() time.Time
	// TouchEvery is how stale a token's last_used_at may get (default one
	// minute): a use records the time in memory only when the stored one
	// is older than this, and a background flush writes the recorded times
	// every TouchEvery.
	TouchEvery time.Duration
	// SyncTimeout bounds the wait for the watch to bring a write into this
	// Store's view (default 10 s).
	SyncTimeout time.Duration
}

// Store is one process's handle on the identity bucket and its live view
// of it. Its methods are safe for concurrent use.
type Store struct {
	cfg       Config
	kv        jetstream.KeyValue
	stream    jetstream.Stream
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once

	statics       map[[sha256.Size]byte]*Principal
	staticsByUser map[string][]*Principal

	v view

	// revMu guards rev (the last bucket revision applied to the view),
	// changed (closed and replaced at every applied revision) and watchErr.
	revMu    sync.Mutex
	rev      uint64
	changed  chan struct{}
	watchErr error

	// touched holds the token uses (digest → time) not yet written: read
	// without a lock by every Authenticate.
	touched sync.Map
}

// Open creates (or updates to cfg) the bucket, loads the whole of it into
// the view and starts the watch that keeps the view current; it returns
// once the initial values are loaded.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Store, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultBucket
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TouchEvery <= 0 {
		cfg.TouchEvery = time.Minute
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = 10 * time.Second
	}
	s := &Store{cfg: cfg, statics: map[[sha256.Size]byte]*Principal{}, staticsByUser: map[string][]*Principal{},
		changed: make(chan struct{}), v: newView()}
	for i, e := range cfg.Static {
		orgs, err := checkStatic(i, e)
		if err != nil {
			return nil, fmt.Errorf("identity: %w", err)
		}
		d := sha256.Sum256([]byte(e.Token))
		if _, dup := s.statics[d]; dup {
			return nil, fmt.Errorf("identity: static[%d].token: duplicate token", i)
		}
		p := &Principal{User: e.User, static: orgs}
		s.statics[d] = p
		id := strings.ToLower(e.User.ID)
		s.staticsByUser[id] = append(s.staticsByUser[id], p)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("identity: jetstream: %w", err)
	}
	if s.kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: cfg.Bucket, Storage: jetstream.FileStorage, Replicas: cfg.Replicas, History: 1,
	}); err != nil {
		return nil, fmt.Errorf("identity: bucket %s: %w", cfg.Bucket, err)
	}
	if s.stream, err = js.Stream(ctx, "KV_"+cfg.Bucket); err != nil {
		return nil, fmt.Errorf("identity: stream of bucket %s: %w", cfg.Bucket, err)
	}
	// Every revision up to the bucket's last one now is in the watch's
	// initial values: the view has applied them once those are loaded.
	info, err := s.stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("identity: bucket %s state: %w", cfg.Bucket, err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	w, err := s.kv.WatchAll(wctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("identity: watching %s: %w", cfg.Bucket, err)
	}
	s.cancel, s.done = cancel, make(chan struct{})
	loaded := make(chan struct{})
	go s.watch(wctx, w, info.State.LastSeq, loaded)
	select {
	case <-loaded:
	case <-s.done:
		cancel()
		return nil, fmt.Errorf("identity: loading %s: %w", cfg.Bucket, s.watchError())
	case <-ctx.Done():
		s.Close()
		return nil, fmt.Errorf("identity: loading %s: %w", cfg.Bucket, ctx.Err())
	}
	go s.flushLoop(wctx)
	return s, nil
}

// Close writes the pending last-used times (at most SyncTimeout) and stops
// the watch; later calls do nothing. The connection stays open (it is the
// caller's).
func (s *Store) Close() {
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.SyncTimeout)
		defer cancel()
		_ = s.FlushLastUsed(ctx)
		s.cancel()
		<-s.done
	})
}

// watch applies the bucket's entries to the view until ctx ends or the
// watch channel closes, closing loaded at the end of the initial values
// (which cover every revision up to initial).
func (s *Store) watch(ctx context.Context, w jetstream.KeyWatcher, initial uint64, loaded chan struct{}) {
	defer close(s.done)
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				s.revMu.Lock()
				s.watchErr = errors.New("the watch stopped")
				s.revMu.Unlock()
				return
			}
			if e == nil {
				if loaded != nil {
					s.revMu.Lock()
					s.rev = max(s.rev, initial)
					s.revMu.Unlock()
					close(loaded)
					loaded = nil
				}
				continue
			}
			s.v.apply(e)
			s.revMu.Lock()
			if e.Revision() > s.rev {
				s.rev = e.Revision()
			}
			close(s.changed)
			s.changed = make(chan struct{})
			s.revMu.Unlock()
		}
	}
}

func (s *Store) watchError() error {
	s.revMu.Lock()
	defer s.revMu.Unlock()
	if s.watchErr != nil {
		return s.watchErr
	}
	return errors.New("the watch stopped")
}

// sync waits until the view holds every write the bucket had when it was
// called (so a write of this process, or a check before a compare-and-set,
// sees the latest values), at most SyncTimeout.
func (s *Store) sync(ctx context.Context) error {
	info, err := s.stream.Info(ctx)
	if err != nil {
		return fmt.Errorf("identity: bucket state: %w", err)
	}
	return s.await(ctx, info.State.LastSeq)
}

// await waits until the view has applied revision rev.
func (s *Store) await(ctx context.Context, rev uint64) error {
	timer := time.NewTimer(s.cfg.SyncTimeout)
	defer timer.Stop()
	for {
		s.revMu.Lock()
		cur, ch := s.rev, s.changed
		s.revMu.Unlock()
		if cur >= rev {
			return nil
		}
		select {
		case <-ch:
		case <-s.done:
			return fmt.Errorf("identity: view: %w", s.watchError())
		case <-ctx.Done():
			return fmt.Errorf("identity: waiting for the view: %w", ctx.Err())
		case <-timer.C:
			return fmt.Errorf("identity: the view did not reach revision %d within %s (at %d)", rev, s.cfg.SyncTimeout, cur)
		}
	}
}

// Revision is the last bucket revision applied to the view.
func (s *Store) Revision() uint64 {
	s.revMu.Lock()
	defer s.revMu.Unlock()
	return s.rev
}

// Changed returns a channel closed at the next change of the view (for
// tests and watchers that wait on an event rather than poll blindly).
func (s *Store) Changed() <-chan struct{} {
	s.revMu.Lock()
	defer s.revMu.Unlock()
	return s.changed
}

// maxRetries bounds the compare-and-set loops (each retry follows a
// concurrent change of the same key).
const maxRetries = 20

func hashKey(s string) string {
	d := sha256.Sum256([]byte(strings.ToLower(s)))
	return hex.EncodeToString(d[:16])
}

func wsKey(org, id string) string         { return "ws." + org + "." + id }
func nameKey(org, name string) string     { return "wsname." + org + "." + hashKey(name) }
func userKey(id string) string            { return "user." + id }
func emailKey(email string) string        { return "email." + hashKey(email) }
func tokenKey(d [sha256.Size]byte) string { return "token." + hex.EncodeToString(d[:]) }
func invKey(org, id string) string        { return "inv." + org + "." + id }

const registeredKey = "meta.registered"

// put writes v at key: create when rev is 0, else update at rev (ok false
// on a concurrent change). The view holds the write when put returns.
func (s *Store) put(ctx context.Context, key string, v any, rev uint64) (ok bool, err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return false, fmt.Errorf("identity: encoding %s: %w", key, err)
	}
	var nrev uint64
	if rev == 0 {
		nrev, err = s.kv.Create(ctx, key, b)
	} else {
		nrev, err = s.kv.Update(ctx, key, b, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || isWrongSeq(err) {
		return false, s.sync(ctx)
	}
	if err != nil {
		return false, fmt.Errorf("identity: writing %s: %w", key, err)
	}
	return true, s.await(ctx, nrev)
}

// del deletes key at revision rev (0: whatever its revision); ok false on a
// concurrent change.
func (s *Store) del(ctx context.Context, key string, rev uint64) (ok bool, err error) {
	var opts []jetstream.KVDeleteOpt
	if rev != 0 {
		opts = append(opts, jetstream.LastRevision(rev))
	}
	err = s.kv.Delete(ctx, key, opts...)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || isWrongSeq(err) {
		return false, s.sync(ctx)
	}
	if err != nil {
		return false, fmt.Errorf("identity: deleting %s: %w", key, err)
	}
	return true, s.sync(ctx)
}

// isWrongSeq reports the server's "wrong last sequence" answer to a
// compare-and-set, which some client paths do not map to
// ErrKeyRevisionMismatch.
func isWrongSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

func (s *Store) now() time.Time { return s.cfg.Now().UTC() }
