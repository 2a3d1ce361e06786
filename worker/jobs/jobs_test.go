package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
	"github.com/geostat-engine/geostat/worker/problem"
)

// newStore runs an in-process NATS server with JetStream in a temporary
// directory and opens the job store on it, as the worker does.
func newStore(t *testing.T) *jskv.Store { return newStoreAckWait(t, 0) }

// newStoreAckWait is newStore with the queue's ack deadline.
func newStoreAckWait(t *testing.T, ackWait time.Duration) *jskv.Store {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := cluster.ConnectInProcess(ns, "test")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := jskv.Open(ctx, nc, jskv.Config{AckWait: ackWait})
	require.NoError(t, err)
	return st
}

// newManager opens a Manager on a new job store (o.Shared and o.ID set
// unless given); it shuts down when the test ends, before the server.
func newManager(t *testing.T, o jobs.Options) (*jobs.Manager, error) {
	t.Helper()
	if o.Shared == nil {
		o.Shared = newStore(t)
	}
	if o.ID == "" {
		o.ID = "w-test"
	}
	m, err := jobs.NewManager(o)
	if err == nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			m.Shutdown(ctx)
		})
	}
	return m, err
}

type teapot struct{}

func (teapot) Error() string { return "short and stout" }
func (teapot) Problem() jobs.Problem {
	return jobs.Problem{Type: "urn:test/teapot", Title: "Teapot", Status: 418, Detail: "short and stout"}
}

func wait(t *testing.T, m *jobs.Manager, id string) jobs.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, ok := m.Wait(ctx, id)
	require.True(t, ok, "job %s did not finish: %+v", id, r)
	return r
}

func TestSubmitSucceedsAndFails(t *testing.T) {
	m, err := newManager(t, jobs.Options{})
	require.NoError(t, err)
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "knn", User: "u1"}, func(ctx context.Context, progress func(int, string)) (any, error) {
		progress(50, "half way")
		return map[string]string{"message": "done"}, nil
	})
	require.NoError(t, err)
	assert.Len(t, r.ID, 36)
	got := wait(t, m, r.ID)
	assert.Equal(t, jobs.Succeeded, got.Status)
	assert.Equal(t, 100, got.Progress)
	assert.JSONEq(t, `{"message": "done"}`, string(got.Result))

	r, _ = m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "knn", User: "u1"}, func(context.Context, func(int, string)) (any, error) { return nil, teapot{} })
	got = wait(t, m, r.ID)
	assert.Equal(t, jobs.Failed, got.Status)
	assert.Equal(t, 418, got.Error.Status)

	r, _ = m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "knn", User: "u1"}, func(context.Context, func(int, string)) (any, error) { panic("boom") })
	got = wait(t, m, r.ID)
	assert.Equal(t, jobs.Failed, got.Status)
	assert.Equal(t, problem.ComputeInternal, got.Error.Type, "a panic is a fault of the worker")
	assert.NotContains(t, got.Error.Detail, "boom", "neither the panic nor its stack is in the answer")
	assert.Equal(t, 500, got.Error.Status)

	r, _ = m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "knn", User: "u1"}, func(context.Context, func(int, string)) (any, error) { return nil, errors.New("plain") })
	got = wait(t, m, r.ID)
	assert.Equal(t, "plain", got.Error.Detail)
	assert.Len(t, m.List("org"), 4)
	assert.Empty(t, m.List("other"))
}

func TestQueueAndCancel(t *testing.T) {
	m, err := newManager(t, jobs.Options{MaxJobs: 1})
	require.NoError(t, err)
	started := make(chan struct{})
	long := func(ctx context.Context, _ func(int, string)) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	a, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, long)
	<-started
	b, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, func(context.Context, func(int, string)) (any, error) { return 1, nil })
	rb, _ := m.Get(b.ID)
	assert.Equal(t, jobs.Requested, rb.Status, "the second job waits for the slot")
	ra, _ := m.Get(a.ID)
	assert.Equal(t, jobs.InProgress, ra.Status)

	require.True(t, m.Cancel(a.ID))
	assert.Equal(t, jobs.Cancelled, wait(t, m, a.ID).Status)
	assert.Equal(t, jobs.Succeeded, wait(t, m, b.ID).Status, "the queued job runs once the slot frees")
	assert.False(t, m.Cancel("nope"))

	// jobs.Cancelling a queued job.
	block := make(chan struct{})
	c, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, func(ctx context.Context, _ func(int, string)) (any, error) { <-block; return 1, nil })
	d, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, func(context.Context, func(int, string)) (any, error) { return 1, nil })
	m.Cancel(d.ID)
	assert.Equal(t, jobs.Cancelled, wait(t, m, d.ID).Status)
	close(block)
	assert.Equal(t, jobs.Succeeded, wait(t, m, c.ID).Status)
}

func TestShutdownInterruptsRunningJobs(t *testing.T) {
	m, err := newManager(t, jobs.Options{MaxJobs: 1})
	require.NoError(t, err)
	started := make(chan struct{})
	a, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, func(ctx context.Context, _ func(int, string)) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	<-started
	b, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, func(context.Context, func(int, string)) (any, error) { return 1, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	m.Shutdown(ctx)
	// Interrupted at the timeout: back in the shared queue, to run again
	// (its first attempt counted); the queued one goes back untouched.
	ra, _ := m.Get(a.ID)
	assert.Equal(t, jobs.Requested, ra.Status)
	assert.Equal(t, 1, ra.Attempts)
	assert.Contains(t, ra.Message, "attempt 2 of 3")
	rb, _ := m.Get(b.ID)
	assert.Equal(t, jobs.Requested, rb.Status)
	assert.Zero(t, rb.Attempts)
	_, err = m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x", User: ""}, nil)
	assert.ErrorIs(t, err, jobs.ErrClosed)
	m.Shutdown(ctx) // idempotent
}

// logSink is a concurrency-safe log destination that signals the first line
// containing a marker.
type logSink struct {
	mu     sync.Mutex
	buf    strings.Builder
	marker string
	seen   chan struct{}
	once   sync.Once
}

func newLogSink(marker string) *logSink { return &logSink{marker: marker, seen: make(chan struct{})} }

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.marker != "" && strings.Contains(string(p), l.marker) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func TestSubmittedIsLoggedBeforeStarted(t *testing.T) {
	sink := newLogSink("")
	m, err := newManager(t, jobs.Options{Logger: slog.New(slog.NewTextHandler(sink, nil))})
	require.NoError(t, err)
	for range 20 {
		r, err := m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "knn", User: "u"}, func(context.Context, func(int, string)) (any, error) { return 1, nil })
		require.NoError(t, err)
		wait(t, m, r.ID)
		out := sink.String()
		sub := strings.Index(out, `msg="task submitted" job_id=`+r.ID)
		start := strings.Index(out, `msg="job started" job_id=`+r.ID)
		require.True(t, sub >= 0 && start >= 0, out)
		require.Less(t, sub, start, out)
	}
}

func TestShutdownLogsWhatItWaitsForAndEachFate(t *testing.T) {
	sink := newLogSink("shutting down:")
	m, err := newManager(t, jobs.Options{MaxJobs: 2, Logger: slog.New(slog.NewTextHandler(sink, nil))})
	require.NoError(t, err)
	startedA, startedB, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	a, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "slow", User: ""}, func(ctx context.Context, _ func(int, string)) (any, error) {
		close(startedA)
		<-ctx.Done() // ends only when Shutdown cancels it
		return nil, ctx.Err()
	})
	b, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "quick", User: ""}, func(context.Context, func(int, string)) (any, error) {
		close(startedB)
		<-release
		return 1, nil
	})
	<-startedA
	<-startedB
	c, _ := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "queued", User: ""}, func(context.Context, func(int, string)) (any, error) { return 1, nil })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		<-sink.seen // the announcement is logged before anything ends
		close(release)
		m.Wait(context.Background(), b.ID) // b has ended
		cancel()                           // the "timeout" for job a
	}()
	m.Shutdown(ctx)

	out := sink.String()
	assert.Contains(t, out, `msg="shutting down: waiting up to 10s for 2 running jobs"`)
	assert.NotContains(t, out, `msg="shutdown: queued job put back in the shared queue (another worker, or this one when it starts again, runs it)" job_id=`+c.ID, "c, never taken from the shared queue by this worker (its slots were full), is not this worker's to put back")
	assert.Contains(t, out, `msg="shutdown: job interrupted at the timeout, put back in the shared queue to run again" job_id=`+a.ID)
	assert.Contains(t, out, `msg="shutdown: job ended before the timeout" job_id=`+b.ID+" task=quick status=succeeded")
	ra, _ := m.Get(a.ID)
	assert.Equal(t, jobs.Requested, ra.Status)
	rc, _ := m.Get(c.ID)
	assert.Equal(t, jobs.Requested, rc.Status)
	assert.Less(t, strings.Index(out, "shutting down:"), strings.Index(out, "shutdown: job ended"), out)
}

// Results keep their URLs readable: & < > are not escaped as \u0026 etc.,
// neither in the record nor in the stored one.
func TestResultsAreNotHTMLEscaped(t *testing.T) {
	st := newStore(t)
	m, err := newManager(t, jobs.Options{Shared: st})
	require.NoError(t, err)
	const u = "http://h/file?op=view&se=1&sig=<x>"
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "x", User: ""}, func(context.Context, func(int, string)) (any, error) {
		return map[string]string{"view": u}, nil
	})
	require.NoError(t, err)
	got := wait(t, m, r.ID)
	assert.Contains(t, string(got.Result), u)
	saved, ok, err := st.Get(context.Background(), r.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Contains(t, string(saved.Result), u)
}

// blocker is a job function that signals its start and returns when
// released (or cancelled).
func blocker(started chan<- string, release <-chan struct{}, name string) jobs.Func {
	return func(ctx context.Context, _ func(int, string)) (any, error) {
		started <- name
		select {
		case <-release:
			return name, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func TestMemoryAdmissionCountsRunningJobs(t *testing.T) {
	m, err := newManager(t, jobs.Options{MaxJobs: 4, MaxMemory: 100})
	require.NoError(t, err)
	started := make(chan string, 4)
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	spec := jobs.Spec{Org: "o", Topic: "t", Task: "x"}
	spec.Memory = 60
	a, err := m.Submit(context.Background(), spec, blocker(started, releaseA, "a"))
	require.NoError(t, err)
	require.Equal(t, "a", <-started)
	// 60 + 50 > 100: b fits alone but not beside a, so it waits although
	// slots are free, and says why.
	spec.Memory = 50
	b, err := m.Submit(context.Background(), spec, blocker(started, releaseB, "b"))
	require.NoError(t, err)
	rb, _ := m.Get(b.ID)
	assert.Equal(t, jobs.Requested, rb.Status)
	// The message is set once this worker has taken b from the queue.
	require.Eventually(t, func() bool {
		rb, _ := m.Get(b.ID)
		return strings.Contains(rb.Message, "waiting for memory")
	}, 10*time.Second, 5*time.Millisecond, "b says it waits for memory")
	running, queued := m.Counts()
	assert.Equal(t, [2]int{1, 1}, [2]int{running, queued})
	// A small job behind b waits too (first in, first out).
	spec.Memory = 10
	c, err := m.Submit(context.Background(), spec, func(context.Context, func(int, string)) (any, error) { return "c", nil })
	require.NoError(t, err)
	rc, _ := m.Get(c.ID)
	assert.Equal(t, jobs.Requested, rc.Status)
	// Never fits: refused.
	spec.Memory = 101
	_, err = m.Submit(context.Background(), spec, nil)
	assert.ErrorIs(t, err, jobs.ErrTooLarge)
	// a ends: b starts, then c (50 + 10 fit).
	close(releaseA)
	assert.Equal(t, jobs.Succeeded, wait(t, m, a.ID).Status)
	require.Equal(t, "b", <-started)
	assert.Equal(t, jobs.Succeeded, wait(t, m, c.ID).Status)
	close(releaseB)
	assert.Equal(t, jobs.Succeeded, wait(t, m, b.ID).Status)
	running, queued = m.Counts()
	assert.Equal(t, [2]int{0, 0}, [2]int{running, queued})
}

func TestRetentionPrunesFinishedRecordsOnly(t *testing.T) {
	st := newStore(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m, err := newManager(t, jobs.Options{Shared: st, MaxJobs: 1, Retention: 30 * 24 * time.Hour, Now: clock})
	require.NoError(t, err)
	spec := jobs.Spec{Org: "o", Topic: "t", Task: "x"}
	old, _ := m.Submit(context.Background(), spec, func(context.Context, func(int, string)) (any, error) { return 1, nil })
	wait(t, m, old.ID)
	started := make(chan string, 1)
	release := make(chan struct{})
	running, _ := m.Submit(context.Background(), spec, blocker(started, release, "r"))
	<-started
	queued, _ := m.Submit(context.Background(), spec, func(context.Context, func(int, string)) (any, error) { return 1, nil })
	mu.Lock()
	now = now.Add(31 * 24 * time.Hour)
	mu.Unlock()
	m.Prune()
	_, ok := m.Get(old.ID)
	assert.False(t, ok, "a finished job past the retention is pruned")
	// The stored record is deleted by the store's goroutine: bounded wait.
	require.Eventually(t, func() bool {
		_, ok, err := st.Get(context.Background(), old.ID)
		return err == nil && !ok
	}, 10*time.Second, 10*time.Millisecond, "the pruned record is deleted from the store")
	for _, id := range []string{running.ID, queued.ID} {
		_, ok := m.Get(id)
		assert.True(t, ok, "running and queued jobs are never pruned")
	}
	close(release)
	wait(t, m, queued.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.Shutdown(ctx)
	// A job finished a day ago is kept, also across a restart.
	m2, err := newManager(t, jobs.Options{Shared: st, Retention: 30 * 24 * time.Hour, Now: func() time.Time { return clock().Add(24 * time.Hour) }})
	require.NoError(t, err)
	_, ok = m2.Get(queued.ID)
	assert.True(t, ok)
}

func TestMaxPerUserBoundsUnfinishedJobs(t *testing.T) {
	m, err := newManager(t, jobs.Options{MaxJobs: 1, MaxPerUser: 2})
	require.NoError(t, err)
	started := make(chan string, 1)
	release := make(chan struct{})
	quick := func(context.Context, func(int, string)) (any, error) { return 1, nil }
	a := jobs.Spec{Org: "o", Topic: "t", Task: "x", User: "a"}
	first, err := m.Submit(context.Background(), a, blocker(started, release, "first"))
	require.NoError(t, err)
	<-started
	second, err := m.Submit(context.Background(), a, quick) // queued behind the first
	require.NoError(t, err)
	_, err = m.Submit(context.Background(), a, quick)
	assert.ErrorIs(t, err, jobs.ErrBusy, "a third unfinished job of the same user")
	b := a
	b.User = "b"
	other, err := m.Submit(context.Background(), b, quick)
	require.NoError(t, err, "another user is not held back")
	close(release)
	for _, id := range []string{first.ID, second.ID, other.ID} {
		assert.Equal(t, jobs.Succeeded, wait(t, m, id).Status)
	}
	last, err := m.Submit(context.Background(), a, quick)
	require.NoError(t, err, "finished jobs do not count")
	assert.Equal(t, jobs.Succeeded, wait(t, m, last.ID).Status) // nothing writes to the directory after the test
}

// TestShutdownDoesNotWaitForAJobIgnoringCancel checks that a job whose
// function ignores its cancelled context does not hold Shutdown past its
// deadline plus the 2 s grace: the process can exit. Before, Shutdown
// waited for it for ever.
func TestShutdownDoesNotWaitForAJobIgnoringCancel(t *testing.T) {
	m, err := newManager(t, jobs.Options{})
	require.NoError(t, err)
	release := make(chan struct{})
	started := make(chan struct{})
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "org", Topic: "geostatistics", Task: "knn", User: "u1"}, func(context.Context, func(int, string)) (any, error) {
		close(started)
		<-release // ignores ctx
		return nil, nil
	})
	require.NoError(t, err)
	t.Cleanup(func() { // before the data directory is removed
		close(release)
		wait(t, m, r.ID)
	})
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	returned := make(chan struct{})
	go func() { m.Shutdown(ctx); close(returned) }()
	select {
	case <-returned:
	case <-time.After(50*time.Millisecond + 2*time.Second + 2*time.Second):
		t.Fatal("Shutdown waited for a job that ignores its cancel")
	}
}

// jobs.Notify sets the message of the job whose context it is given, keeping
// its progress; it does nothing outside a job.
func TestNotifySetsMessage(t *testing.T) {
	m, err := newManager(t, jobs.Options{})
	require.NoError(t, err)
	noted := make(chan struct{})
	release := make(chan struct{})
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x"}, func(ctx context.Context, progress func(int, string)) (any, error) {
		progress(40, "simulating")
		jobs.Notify(ctx, "shard 2 of 3 lost: compute worker w silent since 12:00:00")
		close(noted)
		<-release
		return 1, nil
	})
	require.NoError(t, err)
	<-noted
	got, ok := m.Get(r.ID)
	require.True(t, ok)
	assert.Equal(t, "shard 2 of 3 lost: compute worker w silent since 12:00:00", got.Message)
	assert.Equal(t, 40, got.Progress)
	close(release)
	wait(t, m, r.ID)
	jobs.Notify(context.Background(), "no job") // no effect, no panic
}

// blockingStore is a job store whose record writes wait until released:
// a slow NATS, as the Manager's store goroutine sees it. entered receives
// a value (when there is room) each time a write starts waiting.
type blockingStore struct {
	*jskv.Store
	release chan struct{}
	entered chan struct{}
}

func newBlockingStore(t *testing.T) blockingStore {
	return blockingStore{Store: newStore(t), release: make(chan struct{}), entered: make(chan struct{}, 1)}
}

func (b blockingStore) SaveRev(ctx context.Context, r jobs.Record) (uint64, error) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	select {
	case <-b.release:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return b.Store.SaveRev(ctx, r)
}

// A submit whose context ends while the store is still busy with an
// earlier write answers an error at once and its job is failed, never run;
// status reads answer meanwhile; the earlier submit completes once the
// store does.
func TestSubmitGivesUpWhenTheStoreIsSlow(t *testing.T) {
	st := newBlockingStore(t)
	m, err := newManager(t, jobs.Options{Shared: st})
	require.NoError(t, err)
	quick := func(context.Context, func(int, string)) (any, error) { return 1, nil }
	first := make(chan error, 1)
	var firstRec jobs.Record
	go func() {
		var err error
		firstRec, err = m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x"}, quick)
		first <- err
	}()
	// The first write holds the store; wait until it does (the job is
	// listed as soon as Submit took it, before its write is queued).
	<-st.entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = m.Submit(ctx, jobs.Spec{Org: "o", Topic: "t", Task: "y"}, quick)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 2*time.Second, "the submit answers when its context ends")
	var given jobs.Record
	for _, r := range m.List("o") {
		if r.Task == "y" {
			given = r
		}
	}
	assert.Equal(t, jobs.Failed, given.Status, "the job given up is failed")
	close(st.release)
	require.NoError(t, <-first)
	assert.Equal(t, jobs.Succeeded, wait(t, m, firstRec.ID).Status)
	got, ok := m.Get(given.ID)
	require.True(t, ok)
	assert.Equal(t, jobs.Failed, got.Status, "and never runs")
}

// A submit whose own store write has started and hangs answers when its
// context ends, not at the store call's 30 s bound; its job is failed and
// stays failed once the store answers again.
func TestSubmitGivesUpWhileItsWriteHangs(t *testing.T) {
	st := newBlockingStore(t)
	m, err := newManager(t, jobs.Options{Shared: st})
	require.NoError(t, err)
	ran := make(chan struct{}, 1)
	fn := func(context.Context, func(int, string)) (any, error) { ran <- struct{}{}; return 1, nil }
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		_, err := m.Submit(ctx, jobs.Spec{Org: "o", Topic: "t", Task: "x"}, fn)
		answered <- err
	}()
	<-st.entered // the write has started and waits
	t0 := time.Now()
	cancel()
	err = <-answered
	assert.Less(t, time.Since(t0), 2*time.Second, "the submit answers when its context ends")
	require.ErrorIs(t, err, context.Canceled)
	list := m.List("o")
	require.Len(t, list, 1)
	assert.Equal(t, jobs.Failed, list[0].Status)
	close(st.release)
	// The failed record is written after the cut write; a later job runs,
	// so the store is working again, and the given-up one never ran.
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "y"}, func(context.Context, func(int, string)) (any, error) { return 2, nil })
	require.NoError(t, err)
	assert.Equal(t, jobs.Succeeded, wait(t, m, r.ID).Status)
	got, ok := m.Get(list[0].ID)
	require.True(t, ok)
	assert.Equal(t, jobs.Failed, got.Status)
	select {
	case <-ran:
		t.Fatal("the given-up job ran")
	default:
	}
}

// After Shutdown, a prune (its store deletion queued behind the shut
// store goroutine) neither deadlocks nor loses the deletion.
func TestPruneAfterShutdown(t *testing.T) {
	st := newStore(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m, err := newManager(t, jobs.Options{Shared: st, Retention: time.Hour, Now: clock})
	require.NoError(t, err)
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x"}, func(context.Context, func(int, string)) (any, error) { return 1, nil })
	require.NoError(t, err)
	wait(t, m, r.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.Shutdown(ctx)
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	pruned := make(chan struct{})
	go func() { m.Prune(); close(pruned) }()
	select {
	case <-pruned:
	case <-time.After(10 * time.Second):
		t.Fatal("Prune after Shutdown did not return")
	}
	require.Eventually(t, func() bool {
		_, ok, err := st.Get(context.Background(), r.ID)
		return err == nil && !ok
	}, 10*time.Second, 10*time.Millisecond, "the pruned record is deleted")
}

// gatedStore is a job store whose record updates wait while closed: a
// record write stuck on a slow server while a job runs.
type gatedStore struct {
	*jskv.Store
	closed  atomic.Bool
	release chan struct{}
}

func (g *gatedStore) wait(ctx context.Context) error {
	if !g.closed.Load() {
		return nil
	}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedStore) Update(ctx context.Context, id string, f func(*jobs.Record) error) (jobs.Record, uint64, error) {
	if err := g.wait(ctx); err != nil {
		return jobs.Record{}, 0, err
	}
	return g.Store.Update(ctx, id, f)
}

func (g *gatedStore) UpdateFrom(ctx context.Context, base jobs.Record, rev uint64, f func(*jobs.Record) error) (jobs.Record, uint64, error) {
	if err := g.wait(ctx); err != nil {
		return jobs.Record{}, 0, err
	}
	return g.Store.UpdateFrom(ctx, base, rev, f)
}

// A running job whose progress saves are stuck on the store for several
// ack deadlines keeps its queue message alive all along: it is neither
// redelivered nor run a second time, and its progress is saved when the
// store comes back.
func TestHeartbeatsDoNotWaitBehindStuckSaves(t *testing.T) {
	const ackWait = 600 * time.Millisecond
	st := &gatedStore{Store: newStoreAckWait(t, ackWait), release: make(chan struct{})}
	m, err := newManager(t, jobs.Options{Shared: st, ProgressEvery: 50 * time.Millisecond})
	require.NoError(t, err)
	var starts atomic.Int32
	running := make(chan struct{})
	finish := make(chan struct{})
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "t", Task: "x"}, func(ctx context.Context, progress func(int, string)) (any, error) {
		if starts.Add(1) == 1 {
			close(running)
		}
		for i := 1; ; i++ {
			select {
			case <-finish:
				return "done", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(20 * time.Millisecond):
				progress(i%99, "working")
			}
		}
	})
	require.NoError(t, err)
	<-running
	st.closed.Store(true)   // record writes now wait
	time.Sleep(4 * ackWait) // the state under test lasts several ack deadlines
	close(st.release)
	close(finish)
	got := wait(t, m, r.ID)
	assert.Equal(t, jobs.Succeeded, got.Status)
	assert.Equal(t, int32(1), starts.Load(), "the job ran once")
	assert.Equal(t, 1, got.Attempts)
}
