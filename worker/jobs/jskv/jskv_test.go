package jskv_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/cluster"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/jobs/jskv"
)

// startServer runs an in-process NATS server with JetStream over dir.
func startServer(t *testing.T, dir string) *server.Server {
	t.Helper()
	ns, err := cluster.StartServer(cluster.ServerOptions{Dir: dir})
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// open connects to ns and opens the job store.
func open(t *testing.T, ns *server.Server, ackWait time.Duration) *jskv.Store {
	t.Helper()
	nc, err := cluster.ConnectInProcess(ns, "test")
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := jskv.Open(ctx, nc, jskv.Config{AckWait: ackWait})
	require.NoError(t, err)
	return s
}

func TestRecordsRoundTripWithCompareAndSwap(t *testing.T) {
	ns := startServer(t, t.TempDir())
	s := open(t, ns, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := jobs.Record{ID: "job-1", Org: "o", Topic: "geostatistics", Task: "knn", Status: jobs.Requested, Message: "queued", CreatedAt: now}
	require.NoError(t, s.Save(r))
	got, ok, err := s.Get(ctx, "job-1")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, r, got)
	_, ok, err = s.Get(ctx, "job-2")
	require.NoError(t, err)
	assert.False(t, ok)

	// A watcher sees the stored record first, then each change in order.
	seen := make(chan jobs.Record, 16)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	require.NoError(t, s.Watch(wctx, func(r jobs.Record, rev uint64, deleted bool) {
		if deleted {
			r.Status = "deleted"
		}
		seen <- r
	}))
	require.Equal(t, jobs.Requested, (<-seen).Status)

	// Two writers race to move the job on: compare and swap lets one in,
	// the other sees its write and leaves the record.
	var wins atomic.Int32
	done := make(chan error, 2)
	for _, owner := range []string{"a", "b"} {
		go func() {
			rec, _, err := s.Update(ctx, "job-1", func(r *jobs.Record) error {
				if r.Status != jobs.Requested {
					return jobs.ErrUnchanged
				}
				r.Status, r.Owner = jobs.InProgress, owner
				return nil
			})
			if err == nil && rec.Owner == owner {
				wins.Add(1)
			}
			done <- err
		}()
	}
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	assert.Equal(t, int32(1), wins.Load(), "exactly one writer claims the job")
	assert.Equal(t, jobs.InProgress, (<-seen).Status)

	_, _, err = s.Update(ctx, "nope", func(*jobs.Record) error { return nil })
	require.ErrorIs(t, err, jobs.ErrNotFound)
	_, err = s.Load()
	require.NoError(t, err)
	require.NoError(t, s.Delete("job-1"))
	require.NoError(t, s.Delete("job-1"), "deleting twice is harmless")
	assert.Equal(t, jobs.Status("deleted"), (<-seen).Status)
	all, err := s.Load()
	require.NoError(t, err)
	assert.Empty(t, all)
	require.Error(t, s.Save(jobs.Record{ID: "bad.id"}), "ids are single key tokens")
}

func TestQueueDeliversOnceAndRedeliversAfterSilence(t *testing.T) {
	ns := startServer(t, t.TempDir())
	s := open(t, ns, 500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Publish(ctx, "j1", []byte(`{"body":1}`)))
	require.NoError(t, s.Publish(ctx, "j1", []byte(`{"body":1}`)), "a duplicate is dropped")
	require.NoError(t, s.Publish(ctx, "j2", []byte(`{"body":2}`)))

	d1, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "j1", d1.JobID())
	assert.JSONEq(t, `{"body":1}`, string(d1.Request()))
	d2, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "j2", d2.JobID(), "first in, first out; the duplicate was dropped")
	require.NoError(t, d2.Ack())

	// j1 is held without a sign of life: after the ack wait it comes back.
	again, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "j1", again.JobID())
	require.NoError(t, again.Nak(0))
	back, err := s.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "j1", back.JobID(), "a put-back job is taken again")
	require.NoError(t, back.Ack())

	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	defer stop()
	_, err = s.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the queue is empty")
}

// spec is the request a test job travels with: how long it runs (until
// cancelled when negative) and its result.
type spec struct {
	Run    time.Duration `json:"run"`
	Result string        `json:"result"`
	// Block makes attempts 1 to Block of the job run until cancelled.
	Block int `json:"block,omitempty"`
}

// rebuild makes a test job's Func from its request, as the worker does
// from a task request; started receives the job's id when it starts.
func rebuild(started chan<- string) func(jobs.Record, []byte) (jobs.Func, error) {
	return func(r jobs.Record, req []byte) (jobs.Func, error) {
		var sp spec
		if err := json.Unmarshal(req, &sp); err != nil {
			return nil, err
		}
		return func(ctx context.Context, progress func(int, string)) (any, error) {
			if started != nil {
				started <- r.ID
			}
			progress(10, "working")
			if sp.Run < 0 || jobs.AttemptFrom(ctx) <= sp.Block {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			select {
			case <-time.After(sp.Run):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return map[string]string{"result": sp.Result}, nil
		}, nil
	}
}

// manager runs a Manager on the shared store, stopped at the end of the
// test unless the returned stop is called before.
func manager(t *testing.T, s *jskv.Store, id string, maxJobs int, started chan<- string) (*jobs.Manager, func()) {
	t.Helper()
	m, err := jobs.NewManager(jobs.Options{Shared: s, ID: id, MaxJobs: maxJobs, Rebuild: rebuild(started), ProgressEvery: 20 * time.Millisecond})
	require.NoError(t, err)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			m.Shutdown(ctx)
		}
	}
	t.Cleanup(stop)
	return m, stop
}

func submit(t *testing.T, m *jobs.Manager, sp spec) jobs.Record {
	t.Helper()
	req, err := json.Marshal(sp)
	require.NoError(t, err)
	fn, err := rebuild(nil)(jobs.Record{}, req)
	require.NoError(t, err)
	r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "t", User: "u", Request: req}, fn)
	require.NoError(t, err)
	return r
}

func waitFor(t *testing.T, m *jobs.Manager, id string, what string, ok func(jobs.Record) bool) jobs.Record {
	t.Helper()
	var r jobs.Record
	for i := 0; i < 3000; i++ {
		r, _ = m.Get(id)
		if ok(r) {
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("job %s: %s not seen in 30 s: %+v", id, what, r)
	return r
}

func finished(r jobs.Record) bool { return r.Status.Finished() }

func TestTwoManagersShareRecordsAndCancel(t *testing.T) {
	ns := startServer(t, t.TempDir())
	a, _ := manager(t, open(t, ns, 0), "worker-a", 1, nil)
	startedB := make(chan string, 4)
	b, _ := manager(t, open(t, ns, 0), "worker-b", 1, startedB)

	// A quick job submitted to a is answered by b.
	q := submit(t, a, spec{Run: 0, Result: "quick"})
	got := waitFor(t, b, q.ID, "finished", finished)
	assert.Equal(t, jobs.Succeeded, got.Status)
	assert.JSONEq(t, `{"result":"quick"}`, string(got.Result))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wa, ok := a.Wait(ctx, q.ID)
	require.True(t, ok)
	assert.Equal(t, got.Result, wa.Result)

	// Two endless jobs: each worker takes one (one slot each).
	x := submit(t, a, spec{Run: -1})
	y := submit(t, a, spec{Run: -1})
	rx := waitFor(t, b, x.ID, "running", func(r jobs.Record) bool { return r.Status == jobs.InProgress })
	ry := waitFor(t, a, y.ID, "running", func(r jobs.Record) bool { return r.Status == jobs.InProgress })
	assert.ElementsMatch(t, []string{"worker-a", "worker-b"}, []string{rx.Owner, ry.Owner}, "each worker runs one")
	// Progress is saved for the other worker to read.
	waitFor(t, a, x.ID, "progress", func(r jobs.Record) bool { return r.Progress == 10 && r.Message == "working" })

	// A third waits in the shared queue, cancelled from b at once.
	z := submit(t, a, spec{Run: 0})
	require.True(t, b.Cancel(z.ID))
	assert.Equal(t, jobs.Cancelled, waitFor(t, a, z.ID, "cancelled", finished).Status)

	// Each running job is cancelled through the worker that does not run it.
	for _, r := range []jobs.Record{rx, ry} {
		other := a
		if r.Owner == "worker-a" {
			other = b
		}
		require.True(t, other.Cancel(r.ID))
		assert.Equal(t, jobs.Cancelled, waitFor(t, a, r.ID, "cancelled on a", finished).Status)
		assert.Equal(t, jobs.Cancelled, waitFor(t, b, r.ID, "cancelled on b", finished).Status)
	}
	assert.False(t, b.Cancel("no-such-job"))
	assert.Len(t, a.List("o"), 4)
	assert.Len(t, b.List("o"), 4)
}

// A worker shut down past its timeout with a job running and one queued,
// then started again: the finished job still answers, the queued one runs,
// and the running one, put back in the queue, runs again (its second
// attempt) and succeeds.
func TestRestartKeepsFinishedRunsQueuedAndRunsInterruptedAgain(t *testing.T) {
	dir := t.TempDir()
	ns := startServer(t, dir)
	started := make(chan string, 4)
	m, stop := manager(t, open(t, ns, 0), "worker-a", 1, started)
	done := submit(t, m, spec{Run: 0, Result: "kept"})
	waitFor(t, m, done.ID, "finished", finished)
	running := submit(t, m, spec{Block: 1, Result: "second attempt"})
	r1 := waitFor(t, m, running.ID, "running", func(r jobs.Record) bool { return r.Status == jobs.InProgress })
	assert.Equal(t, 1, r1.Attempts, "the first start is attempt 1")
	queued := submit(t, m, spec{Run: 0, Result: "after restart"})
	assert.Equal(t, jobs.Requested, waitFor(t, m, queued.ID, "queued", func(jobs.Record) bool { return true }).Status)
	stop() // the running job is interrupted at the shutdown timeout
	back, ok := m.Get(running.ID)
	require.True(t, ok)
	assert.Equal(t, jobs.Requested, back.Status, "an interrupted job goes back to the queue")
	assert.Equal(t, "Job requested: run again after its worker stopped (attempt 2 of 3)", back.Message)

	// The server itself restarts over the same directory (as the
	// embedded server does with its worker): the put-back job is held
	// until the ack deadline (it was delivered before the restart), so the
	// worker starts again with a short one.
	ns.Shutdown()
	ns.WaitForShutdown()
	ns2 := startServer(t, dir)
	m2, _ := manager(t, open(t, ns2, 500*time.Millisecond), "worker-a", 1, nil)
	kept, ok := m2.Get(done.ID)
	require.True(t, ok)
	assert.JSONEq(t, `{"result":"kept"}`, string(kept.Result))
	r := waitFor(t, m2, running.ID, "finished", finished)
	require.Equal(t, jobs.Succeeded, r.Status, "a job running when its worker stopped runs again: %+v", r.Error)
	assert.JSONEq(t, `{"result":"second attempt"}`, string(r.Result))
	assert.Equal(t, 2, r.Attempts)
	assert.Equal(t, "worker-a", r.Owner)
	q := waitFor(t, m2, queued.ID, "finished", finished)
	assert.Equal(t, jobs.Succeeded, q.Status, "a queued job is still run")
	assert.JSONEq(t, `{"result":"after restart"}`, string(q.Result))
	assert.Equal(t, 1, q.Attempts)
}

// deadWorkersJob records, with the store's own calls, a job that a worker
// took, started (attempt attempts) and died with (no sign of life, no
// ack).
func deadWorkersJob(t *testing.T, s *jskv.Store, id, owner string, attempts int, request string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := time.Now().UTC()
	require.NoError(t, s.Save(jobs.Record{ID: id, Org: "o", Topic: "geostatistics", Task: "t", Status: jobs.Requested, CreatedAt: now}))
	require.NoError(t, s.Publish(ctx, id, []byte(request)))
	d, err := s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, id, d.JobID())
	_, _, err = s.Update(ctx, id, func(r *jobs.Record) error {
		r.Status, r.StartedAt, r.Owner, r.Attempts = jobs.InProgress, &now, owner, attempts
		return nil
	})
	require.NoError(t, err)
}

func TestJobOfADeadWorkerIsRunAgainByTheNextTaker(t *testing.T) {
	ns := startServer(t, t.TempDir())
	ackWait := 300 * time.Millisecond
	s := open(t, ns, ackWait)
	deadWorkersJob(t, s, "dead", "gone", 1, `{"run":0,"result":"again"}`)
	// The states the record goes through, as a watcher sees them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	seen := make(chan jobs.Record, 64)
	require.NoError(t, s.Watch(ctx, func(r jobs.Record, _ uint64, deleted bool) {
		if !deleted {
			seen <- r
		}
	}))

	var interrupted []jobs.Record
	m, err := jobs.NewManager(jobs.Options{Shared: open(t, ns, ackWait), ID: "worker-b", MaxJobs: 1, Rebuild: rebuild(nil),
		OnInterrupted: func(r jobs.Record) { interrupted = append(interrupted, r) }})
	require.NoError(t, err)
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	r := waitFor(t, m, "dead", "finished", finished)
	require.Equal(t, jobs.Succeeded, r.Status, "%+v", r.Error)
	assert.JSONEq(t, `{"result":"again"}`, string(r.Result))
	assert.Equal(t, 2, r.Attempts)
	assert.Equal(t, "worker-b", r.Owner)
	require.Len(t, interrupted, 1, "the interrupted attempt's work elsewhere is cancelled once")
	assert.Equal(t, 1, interrupted[0].Attempts, "named by the attempt that was interrupted")
	assert.Equal(t, jobs.Requested, interrupted[0].Status)
	assert.Equal(t, "Job requested: run again after its worker stopped (attempt 2 of 3)", interrupted[0].Message)

	// A KV watcher may miss a value replaced quickly (the bucket keeps one
	// revision per key), so the put-back state is checked when it was seen;
	// interrupted above checks it was recorded.
	for len(seen) > 0 {
		rec := <-seen
		if rec.Status == jobs.Requested && rec.Attempts == 1 {
			assert.Equal(t, "Job requested: run again after its worker stopped (attempt 2 of 3)", rec.Message)
		}
	}
}

// A worker that crashed while it ran a job (its record in progress, its
// delivery never acknowledged) starts again: it puts the job back at once
// and runs it again when its message comes back after the ack deadline.
func TestCrashedWorkerRunsItsJobAgainWhenItStarts(t *testing.T) {
	ns := startServer(t, t.TempDir())
	// Long enough for the record to be read before the message comes back.
	ackWait := 3 * time.Second
	s := open(t, ns, ackWait)
	deadWorkersJob(t, s, "crashed", "worker-a", 1, `{"run":0,"result":"after the crash"}`)
	m, _ := manager(t, open(t, ns, ackWait), "worker-a", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	back, ok, err := s.Get(ctx, "crashed")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, jobs.Requested, back.Status, "put back by the worker as it starts, before the ack deadline")
	assert.Equal(t, "Job requested: run again after its worker stopped (attempt 2 of 3)", back.Message)
	assert.Empty(t, back.Owner)
	assert.Equal(t, 1, back.Attempts)
	r := waitFor(t, m, "crashed", "finished", finished)
	require.Equal(t, jobs.Succeeded, r.Status, "%+v", r.Error)
	assert.JSONEq(t, `{"result":"after the crash"}`, string(r.Result))
	assert.Equal(t, 2, r.Attempts)
}

func TestJobOfADeadWorkerAtItsLastAttemptIsFailed(t *testing.T) {
	ns := startServer(t, t.TempDir())
	ackWait := 300 * time.Millisecond
	s := open(t, ns, ackWait)
	deadWorkersJob(t, s, "dead", "gone", 3, `{"run":0}`)
	m, _ := manager(t, open(t, ns, ackWait), "worker-b", 1, nil)
	r := waitFor(t, m, "dead", "finished", finished)
	assert.Equal(t, jobs.Failed, r.Status)
	require.NotNil(t, r.Error)
	assert.Equal(t, 503, r.Error.Status)
	assert.Contains(t, r.Error.Detail, "interrupted 3 times")
	assert.Equal(t, 3, r.Attempts)
}

func TestJobOfADeadWorkerWhoseCancelWasAskedIsCancelled(t *testing.T) {
	ns := startServer(t, t.TempDir())
	ackWait := 300 * time.Millisecond
	s := open(t, ns, ackWait)
	deadWorkersJob(t, s, "dead", "gone", 1, `{"run":0}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.RequestCancel(ctx, "dead"), "asked of the worker that died")
	m, _ := manager(t, open(t, ns, ackWait), "worker-b", 1, nil)
	r := waitFor(t, m, "dead", "finished", finished)
	assert.Equal(t, jobs.Cancelled, r.Status, "cancelled, not run again")
}

// A worker that went silent past the ack deadline while it ran a job (a
// stall) finds the job taken over by another worker: it stops its run and
// leaves the other worker's record as it is.
func TestTakenOverJobStopsOnTheSilentWorker(t *testing.T) {
	ns := startServer(t, t.TempDir())
	s := open(t, ns, 0)
	a, _ := manager(t, s, "worker-a", 1, nil)
	job := submit(t, a, spec{Run: -1})
	waitFor(t, a, job.ID, "running", func(r jobs.Record) bool { return r.Status == jobs.InProgress && r.Owner == "worker-a" })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Another worker put it back and started it again (simulated).
	_, _, err := s.Update(ctx, job.ID, func(r *jobs.Record) error {
		r.Owner, r.Attempts, r.Message = "worker-x", 2, "taken over"
		return nil
	})
	require.NoError(t, err)
	for i := 0; ; i++ {
		if running, _ := a.Counts(); running == 0 {
			break
		}
		require.Less(t, i, 3000, "the silent worker's run did not stop")
		time.Sleep(10 * time.Millisecond)
	}
	r, ok, err := s.Get(ctx, job.ID)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, jobs.InProgress, r.Status, "the new holder's record is left as it is")
	assert.Equal(t, "worker-x", r.Owner)
	assert.Equal(t, 2, r.Attempts)
	assert.Equal(t, "taken over", r.Message)
	seen := waitFor(t, a, job.ID, "followed from the store", func(r jobs.Record) bool { return r.Owner == "worker-x" })
	assert.Equal(t, 2, seen.Attempts)
}

// A job that stops every worker running it (here: each is shut down past
// its timeout while the job runs) is run by three workers in turn and then
// failed as interrupted, 503.
func TestJobInterruptedMaxAttemptsTimesIsFailed(t *testing.T) {
	ns := startServer(t, t.TempDir())
	first, _ := manager(t, open(t, ns, 0), "worker-0", 1, nil)
	job := submit(t, first, spec{Run: -1})
	var last jobs.Record
	for i := 0; i < jobs.DefaultMaxAttempts; i++ {
		m := first
		stop := func() {}
		if i > 0 {
			m, stop = manager(t, open(t, ns, 0), "worker-"+strconv.Itoa(i), 1, nil)
		} else {
			stop = func() {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				first.Shutdown(ctx)
			}
		}
		r := waitFor(t, m, job.ID, "running here", func(r jobs.Record) bool {
			return r.Status == jobs.InProgress && r.Owner == "worker-"+strconv.Itoa(i)
		})
		assert.Equal(t, i+1, r.Attempts)
		stop()
		last, _ = m.Get(job.ID)
	}
	assert.Equal(t, jobs.Failed, last.Status)
	require.NotNil(t, last.Error)
	assert.Equal(t, 503, last.Error.Status)
	assert.Equal(t, "the job was interrupted 3 times: each time the worker running it stopped (the last one while it was in progress), "+
		"so it is not run again (a job that makes its worker stop, for example by running out of memory, stops here); submit it again",
		last.Error.Detail)
	reader, _ := manager(t, open(t, ns, 0), "reader", 1, nil)
	r, ok := reader.Get(job.ID)
	require.True(t, ok)
	assert.Equal(t, last.Error, r.Error, "stored for every worker")
}

// BenchmarkJobOverhead measures a job's bookkeeping from submit to its
// finished record, with an empty Func, on records and queue in JetStream
// (the worker's only job store).
func BenchmarkJobOverhead(b *testing.B) {
	noop := func(context.Context, func(int, string)) (any, error) { return 1, nil }
	run := func(b *testing.B, m *jobs.Manager) {
		ctx := context.Background()
		for b.Loop() {
			r, err := m.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "t", Request: []byte(`{}`)}, noop)
			if err != nil {
				b.Fatal(err)
			}
			if got, ok := m.Wait(ctx, r.ID); !ok || got.Status != jobs.Succeeded {
				b.Fatalf("job %s: %+v", r.ID, got)
			}
		}
		m.Shutdown(ctx)
	}
	b.Run("jetstream", func(b *testing.B) {
		ns, err := cluster.StartServer(cluster.ServerOptions{Dir: b.TempDir()})
		require.NoError(b, err)
		defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
		nc, err := cluster.ConnectInProcess(ns, "bench")
		require.NoError(b, err)
		defer nc.Close()
		s, err := jskv.Open(context.Background(), nc, jskv.Config{})
		require.NoError(b, err)
		m, err := jobs.NewManager(jobs.Options{Shared: s, ID: "bench"})
		require.NoError(b, err)
		run(b, m)
	})
}

// A worker leaves in the queue a job larger than its own memory limit
// (accepted by a larger worker) for a worker it fits.
func TestJobTooLargeForAWorkerWaitsForALargerOne(t *testing.T) {
	ns := startServer(t, t.TempDir())
	big, err := jobs.NewManager(jobs.Options{Shared: open(t, ns, 0), ID: "big", MaxJobs: 1, MaxMemory: 100, Rebuild: rebuild(nil)})
	require.NoError(t, err)
	t.Cleanup(func() { big.Shutdown(context.Background()) })
	busy := submit(t, big, spec{Run: -1})
	waitFor(t, big, busy.ID, "running", func(r jobs.Record) bool { return r.Status == jobs.InProgress })

	small, err := jobs.NewManager(jobs.Options{Shared: open(t, ns, 0), ID: "small", MaxJobs: 1, MaxMemory: 50, Rebuild: rebuild(nil)})
	require.NoError(t, err)
	t.Cleanup(func() { small.Shutdown(context.Background()) })
	req, _ := json.Marshal(spec{Result: "large"})
	fn, _ := rebuild(nil)(jobs.Record{}, req)
	large, err := big.Submit(context.Background(), jobs.Spec{Org: "o", Topic: "geostatistics", Task: "t", Memory: 80, Request: req}, fn)
	require.NoError(t, err)
	small2 := submit(t, big, spec{Result: "small"})
	// The small worker skips the large job and runs the one behind it.
	r := waitFor(t, small, small2.ID, "finished", finished)
	assert.Equal(t, "small", r.Owner)
	got, _ := small.Get(large.ID)
	assert.Equal(t, jobs.Requested, got.Status, "the large job is left for a worker it fits")

	require.True(t, big.Cancel(busy.ID))
	r = waitFor(t, small, large.ID, "finished", finished)
	assert.Equal(t, jobs.Succeeded, r.Status)
	assert.Equal(t, "big", r.Owner)
}
