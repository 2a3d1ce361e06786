package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Shared is a record store and a job queue shared by the api workers of a
// cluster (package jskv keeps them in NATS JetStream). With it, a Manager
// is one of many: any of them answers status, results and cancel for any
// job, and each takes from the shared queue only the jobs that fit its own
// Options.MaxJobs and Options.MaxMemory.
type Shared interface {
	Store
	// Get reads a record as it is stored now.
	Get(ctx context.Context, id string) (Record, bool, error)
	// Update applies f to a stored record atomically (compare and swap,
	// retried on a concurrent write) and returns the stored record and its
	// revision. When f returns ErrUnchanged the record is left as it is and
	// returned without error.
	Update(ctx context.Context, id string, f func(*Record) error) (Record, uint64, error)
	// Watch calls f with every stored record and then with every change
	// (a deleted record has only its ID, with deleted true), in revision
	// order, until ctx ends. It returns once the records stored at the
	// call have been passed to f; f runs on one goroutine.
	Watch(ctx context.Context, f func(r Record, revision uint64, deleted bool)) error
	// Publish queues a job with its request (the payload from which
	// Options.Rebuild makes its Func on any worker).
	Publish(ctx context.Context, id string, request []byte) error
	// Next waits for the next queued job, until ctx ends.
	Next(ctx context.Context) (Delivery, error)
	// RequestCancel asks the worker running a job to cancel it;
	// WatchCancels calls f with each job whose cancel was requested
	// (those requested before the call too) until ctx ends, returning once
	// it watches; ClearCancel forgets a job's request.
	RequestCancel(ctx context.Context, id string) error
	WatchCancels(ctx context.Context, f func(id string)) error
	ClearCancel(ctx context.Context, id string) error
	// AckWait is the time after which a taken job whose worker went silent
	// is delivered again.
	AckWait() time.Duration
}

// revisionUpdater is implemented by a Shared store that can write a
// record known at a revision without reading it first (jskv.Store): a
// job's progress and final record cost one round trip instead of two.
type revisionUpdater interface {
	UpdateFrom(ctx context.Context, base Record, rev uint64, f func(*Record) error) (Record, uint64, error)
}

// revisionSaver is implemented by a Shared store whose Save can report
// the revision written (jskv.Store): the claim of a job this worker
// submitted then needs no read of its record.
type revisionSaver interface {
	SaveRev(ctx context.Context, r Record) (uint64, error)
}

// Delivery is a job taken from the shared queue: this worker holds it
// (InProgress while it waits or runs) until Ack, or puts it back (Nak).
type Delivery interface {
	JobID() string
	// Request is the payload given to Publish.
	Request() []byte
	// InProgress tells the queue the job is still held.
	InProgress() error
	// Ack removes the job from the queue.
	Ack() error
	// Nak puts the job back for any worker to take after delay (0: at
	// once).
	Nak(delay time.Duration) error
}

// ErrUnchanged, returned by the function given to Shared.Update, leaves
// the record as it is.
var ErrUnchanged = errors.New("jobs: record unchanged")

// startShared watches the shared records and cancel requests, fails the
// jobs this worker was running when it stopped, and starts the feeder and
// the ticker.
func (m *Manager) startShared() error {
	o := m.opts
	if o.ID == "" {
		return errors.New("jobs: a Manager on a shared queue needs an ID")
	}
	if o.ProgressEvery <= 0 {
		m.opts.ProgressEvery = time.Second
	}
	m.shared = o.Shared
	m.wake = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	m.stopBg = cancel
	fail := func(err error) error {
		cancel()
		return err
	}
	if err := m.shared.Watch(ctx, m.onRecord); err != nil {
		return fail(fmt.Errorf("jobs: watching the job records: %w", err))
	}
	// Cancel requests first, so that an interrupted job whose cancel was
	// asked is cancelled rather than run again.
	if err := m.shared.WatchCancels(ctx, m.onCancel); err != nil {
		return fail(fmt.Errorf("jobs: watching cancel requests: %w", err))
	}
	// Jobs this worker ran before it stopped (crashed, or shut down before
	// it could record them) were interrupted: they run again (their
	// queue message, never acknowledged, is delivered again after the ack
	// deadline) or, past Options.MaxAttempts, fail.
	m.mu.Lock()
	var mine []Record
	for _, j := range m.jobs {
		if (j.rec.Status == InProgress || j.rec.Status == Cancelling) && j.rec.Owner == o.ID {
			mine = append(mine, j.rec)
		}
	}
	m.mu.Unlock()
	for _, r := range mine {
		m.interrupt(ctx, r.ID, o.ID)
	}
	m.mu.Lock()
	m.prune()
	m.mu.Unlock()
	m.bg.Add(2)
	go m.feed(ctx)
	go m.tick(ctx)
	return nil
}

// interrupt settles a job whose worker stopped while it ran (owner, or
// any worker when owner is empty), unless it has finished or been put back
// since: it is run again while it has attempts left (settleInterrupted),
// and OnInterrupted is called first so that the previous attempt's work
// elsewhere is cancelled. It returns the stored record.
func (m *Manager) interrupt(ctx context.Context, id, owner string) (Record, bool) {
	var was Record
	rec, _, err := m.shared.Update(ctx, id, func(r *Record) error {
		if r.Status.Finished() || r.Status == Requested || (owner != "" && r.Owner != owner) {
			return ErrUnchanged
		}
		was = *r
		m.settleInterrupted(r)
		return nil
	})
	if err != nil {
		m.opts.Logger.Error("recording an interrupted job", "job_id", id, "err", err)
		return Record{}, false
	}
	if was.ID == "" {
		return rec, true
	}
	switch rec.Status {
	case Requested:
		m.opts.Logger.Warn("job found interrupted: its worker stopped while it ran; it runs again", "job_id", id, "task", rec.Task,
			"owner", was.Owner, "attempt", rec.Attempts, "max_attempts", m.opts.MaxAttempts)
	case Cancelled:
		m.opts.Logger.Warn("job found interrupted while it was cancelling: recorded as cancelled", "job_id", id, "task", rec.Task, "owner", was.Owner)
		if err := m.shared.ClearCancel(ctx, id); err != nil {
			m.opts.Logger.Warn("clearing a cancel request", "job_id", id, "err", err)
		}
	default:
		m.opts.Logger.Warn("job found interrupted: its worker stopped while it ran, for the last allowed time; recorded as failed",
			"job_id", id, "task", rec.Task, "owner", was.Owner, "attempts", rec.Attempts)
	}
	if m.opts.OnInterrupted != nil {
		m.opts.OnInterrupted(rec)
	}
	return rec, true
}

// settleInterrupted moves a job of the shared queue whose run was
// interrupted (its worker stopped, or shut down past its timeout) on: a
// job being cancelled is cancelled; one started fewer than MaxAttempts
// times goes back to "requested", to be run again from its stored request
// by any worker (safe: tasks are deterministic and commit their target
// only when they end); one started MaxAttempts times is failed as
// interrupted (503).
func (m *Manager) settleInterrupted(r *Record) {
	now := m.opts.Now().UTC()
	was := r.Status
	r.Attempts = max(r.Attempts, 1)
	switch {
	case was == Cancelling || m.cancelRequested(r.ID):
		r.Status, r.Message, r.FinishedAt = Cancelled, "Job cancelled", &now
	case r.Attempts < m.opts.MaxAttempts:
		r.Status, r.Progress, r.FinishedAt, r.Owner = Requested, 0, nil, ""
		r.Message = fmt.Sprintf("Job requested: run again after its worker stopped (attempt %d of %d)", r.Attempts+1, m.opts.MaxAttempts)
	default:
		r.Status, r.FinishedAt, r.Message = Failed, &now, "Job failed"
		r.Error = interruptedTimes(r.Attempts, was)
	}
}

// cancelRequested reports whether a cancel request for a job this worker
// does not hold was seen (Shared.WatchCancels).
func (m *Manager) cancelRequested(id string) bool {
	m.cancelMu.Lock()
	defer m.cancelMu.Unlock()
	return m.cancels[id]
}

// stopShared ends the background goroutines (after Shutdown).
func (m *Manager) stopShared() {
	if m.stopBg == nil {
		return
	}
	m.stopBg()
	m.bg.Wait()
}

// signal tells the feeder that a slot may be free.
func (m *Manager) signal() {
	if m.wake == nil {
		return
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// submitShared records a new job in the shared store and queues it
// (storeIO), waiting until then or until ctx ends (at most 30 s), also
// once the store call has started. j is in m.jobs already; m.mu is not
// held. A job that could not be queued is failed (and kept, so that its id
// answers).
func (m *Manager) submitShared(ctx context.Context, j *job, request []byte) (Record, error) {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	m.mu.Lock()
	rec := j.rec
	m.mu.Unlock()
	// state: 0 queued, 1 started, 2 given up by this Submit (its ctx
	// ended first): the call then skips the job, which is failed here.
	var state atomic.Int32
	done := make(chan error, 1)
	m.io.do(func(ictx context.Context) {
		if !state.CompareAndSwap(0, 1) {
			return
		}
		// Started: the submitter's context ends the store calls too, so
		// that a store that hangs cannot hold the request past it. A
		// write cut short is followed by the failed record (saved below,
		// in order), which a feeder that got the message then skips.
		ictx, stop := context.WithCancel(ictx)
		defer stop()
		defer context.AfterFunc(ctx, stop)()
		if rs, ok := m.shared.(revisionSaver); ok {
			rev, err := rs.SaveRev(ictx, rec)
			if err != nil {
				done <- err
				return
			}
			m.mu.Lock()
			if j.storedRev == 0 {
				j.stored, j.storedRev = rec, rev
			}
			m.mu.Unlock()
		} else if err := m.shared.Save(rec); err != nil {
			done <- err
			return
		}
		done <- m.shared.Publish(ictx, rec.ID, request)
	})
	var qerr error
	select {
	case qerr = <-done:
	case <-ctx.Done():
		if state.CompareAndSwap(0, 2) {
			qerr = fmt.Errorf("the job store did not take the job in time: %w", ctx.Err())
		} else {
			qerr = <-done // started: ctx ends its store calls too
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if qerr != nil {
		now := m.opts.Now().UTC()
		j.rec.Status, j.rec.FinishedAt, j.rec.Message, j.rec.Progress = Failed, &now, "Job failed", 100
		j.rec.Error = toProblem(fmt.Errorf("queueing the job: %w", qerr))
		j.fn = nil
		m.save(j.rec)
		j.closeDone()
		return Record{}, fmt.Errorf("jobs: queueing the job: %w", qerr)
	}
	m.opts.Logger.Info("task submitted", "job_id", j.rec.ID, "topic", j.rec.Topic, "task", j.rec.Task, "org", j.rec.Org)
	return j.rec, nil
}

// claim moves a job this worker took from "requested" to "in progress" in
// the shared store (storeIO), then runs it, unless it was cancelled
// meanwhile (then it is finished here instead) or the store refused (then
// it goes back to the queue). Its slot (m.running, m.memory, m.wg) is held
// until then. m.mu is held.
func (m *Manager) claim(j *job, now time.Time) {
	id := j.rec.ID
	base, baseRev := j.stored, j.storedRev
	m.io.do(func(ctx context.Context) {
		f := func(r *Record) error {
			if r.Status != Requested {
				return ErrUnchanged
			}
			r.Status, r.StartedAt, r.Message, r.Owner = InProgress, &now, "Job in progress", m.opts.ID
			r.Attempts++
			return nil
		}
		// A job this worker submitted is known as it saved it: no read
		// before the compare-and-set.
		rec, rev, err := m.update(ctx, id, base, baseRev, f)
		m.mu.Lock()
		defer m.mu.Unlock()
		j.claiming = false
		unslot := func() {
			m.running--
			m.memory -= j.rec.Memory
			m.wg.Done()
			m.schedule()
		}
		switch {
		case err != nil:
			m.opts.Logger.Error("starting a job of the shared queue; putting it back", "job_id", id, "err", err)
			if !j.rec.Status.Finished() {
				m.putBack(j)
			}
			unslot()
		case j.rec.Status.Finished():
			// Cancelled here while it was being claimed: the cancelled
			// record (saved after this claim) stands.
			m.save(j.rec)
			unslot()
		case rec.Status != InProgress || rec.Owner != m.opts.ID:
			// Cancelled (or taken) elsewhere while it waited here.
			j.rec, j.rev = rec, max(j.rev, rev)
			j.closeDone()
			m.release(j)
			unslot()
		default:
			j.rec, j.rev = rec, max(j.rev, rev)
			j.stored, j.storedRev = rec, rev
			m.launch(j)
		}
	})
}

// putBack returns a job this worker took but did not start to the shared
// queue (storeIO); m.mu is held.
func (m *Manager) putBack(j *job) {
	if d := j.d; d != nil {
		id := j.rec.ID
		m.io.do(func(context.Context) {
			if err := d.Nak(0); err != nil {
				m.opts.Logger.Warn("putting a job back in the shared queue", "job_id", id, "err", err)
			}
		})
	}
	j.d, j.local = nil, false
	delete(m.held, j.rec.ID)
	j.rec.Message = "Job requested: waiting for a free slot"
}

// release acknowledges a finished job's delivery and clears its cancel
// request (storeIO); m.mu is held.
func (m *Manager) release(j *job) {
	d, id, clear := j.d, j.rec.ID, j.cancelAsked
	j.d, j.fn = nil, nil
	delete(m.held, id)
	if d == nil && !clear {
		return
	}
	m.io.do(func(ctx context.Context) {
		if d != nil {
			if err := d.Ack(); err != nil {
				m.opts.Logger.Warn("acknowledging a finished job", "job_id", id, "err", err)
			}
		}
		if clear {
			if err := m.shared.ClearCancel(ctx, id); err != nil {
				m.opts.Logger.Warn("clearing a cancel request", "job_id", id, "err", err)
			}
		}
	})
}

// cancelShared cancels a job this worker does not hold.
func (m *Manager) cancelShared(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec, rev, err := m.shared.Update(ctx, id, func(r *Record) error {
		if r.Status != Requested {
			return ErrUnchanged
		}
		now := m.opts.Now().UTC()
		r.Status, r.Message, r.FinishedAt = Cancelled, "Job cancelled", &now
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false
		}
		m.opts.Logger.Error("cancelling a job", "job_id", id, "err", err)
		return true
	}
	if rec.Status == Cancelled {
		// Seen here at once; the worker that takes it drops it.
		m.mu.Lock()
		m.applyRecord(rec, rev)
		m.mu.Unlock()
		return true
	}
	if rec.Status == InProgress {
		if err := m.shared.RequestCancel(ctx, id); err != nil {
			m.opts.Logger.Error("requesting a job's cancellation", "job_id", id, "err", err)
		}
	}
	return true
}

// ErrNotFound is returned by Shared.Update for a job that does not exist.
var ErrNotFound = errors.New("jobs: no such job")

// onRecord follows a change of the shared records.
func (m *Manager) onRecord(r Record, rev uint64, deleted bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if deleted {
		if j, ok := m.jobs[r.ID]; ok && !j.local {
			j.closeDone()
			delete(m.jobs, r.ID)
		}
		return
	}
	m.applyRecord(r, rev)
}

// applyRecord updates the view of a job this worker does not run; m.mu is
// held.
func (m *Manager) applyRecord(r Record, rev uint64) {
	if m.pruning[r.ID] {
		return
	}
	j, ok := m.jobs[r.ID]
	if !ok {
		j = newJob(r)
		m.jobs[r.ID] = j
	}
	if rev != 0 && rev <= j.rev {
		return
	}
	if j.local {
		// This worker's record is the truth, except for a job it holds
		// queued that another worker cancelled, and a job it runs that
		// another worker took over (this worker went silent past the ack
		// deadline): that run stops, its outcome dropped (see run).
		if (j.rec.Status == InProgress || j.rec.Status == Cancelling) && j.cancel != nil && !j.superseded && !j.ending &&
			(r.Owner != m.opts.ID || r.Attempts != j.rec.Attempts || r.Status == Requested || r.Status.Finished()) {
			j.superseded = true
			j.cancel()
			return
		}
		if j.rec.Status == Requested && r.Status == Cancelled {
			j.rec, j.rev = r, rev
			j.closeDone()
			m.release(j)
			m.schedule()
		}
		return
	}
	j.rec, j.rev = r, max(j.rev, rev)
	if r.Status != Requested {
		j.closeStarted()
	}
	if r.Status.Finished() {
		j.fn = nil
		j.closeDone()
		delete(m.tooLarge, r.ID)
		m.cancelMu.Lock()
		delete(m.cancels, r.ID)
		m.cancelMu.Unlock()
	}
}

// onCancel cancels a job this worker holds whose cancel another worker
// requested.
func (m *Manager) onCancel(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if ok && !j.local && !j.rec.Status.Finished() {
		// Remembered: should its worker stop before it sees the request,
		// the job is cancelled rather than run again.
		m.cancelMu.Lock()
		m.cancels[id] = true
		m.cancelMu.Unlock()
	}
	if !ok || !j.local || j.rec.Status.Finished() {
		return
	}
	j.cancelAsked = true
	m.cancelLocal(j)
}

// feed takes jobs from the shared queue while this worker has a free slot
// and nothing waiting, until ctx ends.
func (m *Manager) feed(ctx context.Context) {
	defer m.bg.Done()
	for ctx.Err() == nil {
		m.mu.Lock()
		free := !m.closed && m.running+m.waiting() < m.opts.MaxJobs
		m.mu.Unlock()
		if !free {
			select {
			case <-m.wake:
			case <-ctx.Done():
			}
			continue
		}
		d, err := m.shared.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			m.opts.Logger.Warn("taking a job from the shared queue", "err", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
			continue
		}
		if d == nil {
			continue
		}
		m.take(ctx, d)
	}
}

// waiting counts the jobs this worker took that wait to start; m.mu is
// held.
func (m *Manager) waiting() int {
	n := 0
	for _, j := range m.queue {
		if j.rec.Status == Requested {
			n++
		}
	}
	return n
}

// take places a job taken from the shared queue in this worker's queue,
// or drops it when it has finished, or fails it when it was running on a
// worker that went silent past the ack deadline.
func (m *Manager) take(ctx context.Context, d Delivery) {
	id := d.JobID()
	// A job this worker submitted and still sees queued needs no read of
	// its record: the claim's compare-and-set checks it anyway.
	m.mu.Lock()
	var rec Record
	mine, ok := m.jobs[id]
	known := ok && mine.fn != nil && mine.rec.Status == Requested && !mine.local
	if known {
		rec = mine.rec
	}
	m.mu.Unlock()
	var err error
	if !known {
		rec, ok, err = m.shared.Get(ctx, id)
	}
	if err != nil {
		m.opts.Logger.Warn("reading a job taken from the shared queue; putting it back", "job_id", id, "err", err)
		_ = d.Nak(time.Second)
		return
	}
	if !ok || rec.Status.Finished() {
		_ = d.Ack()
		return
	}
	if rec.Status != Requested {
		// It started on a worker that died (or stalled past the ack
		// deadline): run again here while it has attempts left (this
		// delivery is the one the next run holds), else failed.
		rec, ok = m.interrupt(ctx, id, "")
		if !ok {
			_ = d.Nak(time.Second)
			return
		}
		if rec.Status != Requested {
			_ = d.Ack()
			return
		}
	}
	if m.opts.MaxMemory > 0 && rec.Memory > m.opts.MaxMemory {
		// Accepted by a worker with more memory: left to such a worker.
		m.mu.Lock()
		if !m.tooLarge[id] {
			m.tooLarge[id] = true
			m.opts.Logger.Info("job needs more memory than this worker's limit; left in the shared queue for a larger worker",
				"job_id", id, "needs", gib(rec.Memory), "limit", gib(m.opts.MaxMemory))
		}
		m.mu.Unlock()
		_ = d.Nak(tooLargeDelay)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		m.io.do(func(context.Context) { _ = d.Nak(0) })
		return
	}
	j, ok := m.jobs[id]
	if !ok {
		j = newJob(rec)
		m.jobs[id] = j
	}
	if j.rec.Status.Finished() {
		m.io.do(func(context.Context) { _ = d.Ack() })
		return
	}
	j.rec, j.local, j.d = rec, true, d
	m.held[id] = j
	if j.fn == nil {
		j.fn = m.rebuild(rec, d.Request())
	}
	if m.cancelRequested(id) {
		// A job run again whose cancel was asked before.
		j.cancelAsked = true
		m.cancelLocal(j)
		return
	}
	m.queue = append(m.queue, j)
	m.schedule()
}

// tooLargeDelay is how long a job too large for this worker is left to
// the others before this worker sees it again.
const tooLargeDelay = time.Second

// rebuild makes the Func of a job accepted by another worker (or before a
// restart).
func (m *Manager) rebuild(r Record, request []byte) Func {
	var fn Func
	err := errors.New("this worker cannot run jobs it did not accept")
	if m.opts.Rebuild != nil {
		fn, err = m.opts.Rebuild(r, request)
	}
	if err != nil {
		return func(context.Context, func(int, string)) (any, error) { return nil, err }
	}
	return fn
}

// tick keeps the held jobs' deliveries alive and saves the progress of
// the running jobs, until ctx ends. It walks only the jobs this worker
// holds (m.held); the saves go through storeIO.
func (m *Manager) tick(ctx context.Context) {
	defer m.bg.Done()
	every := min(m.opts.ProgressEvery, m.shared.AckWait()/3)
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	var pending atomic.Bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A round of record saves still waiting on the store is not
		// followed by another (the changes are saved by the next round
		// after it); the signals of life go out every tick regardless.
		saving := pending.Load()
		type beat struct {
			j     *job
			d     Delivery
			rec   Record
			dirty bool
		}
		var beats []beat
		m.mu.Lock()
		for _, j := range m.held {
			if !j.local || j.rec.Status.Finished() {
				continue
			}
			b := beat{j: j, d: j.d, rec: j.rec, dirty: !saving && j.dirty && !j.superseded && !j.claiming}
			if b.dirty {
				j.dirty = false
			}
			beats = append(beats, b)
		}
		m.mu.Unlock()
		// The signals of life go out at once, not behind store writes
		// that wait on a slow server: a held job must not reach its ack
		// deadline because a record write is slow.
		var saves []beat
		for _, b := range beats {
			if b.d != nil {
				if err := b.d.InProgress(); err != nil {
					m.opts.Logger.Warn("keeping a job held", "job_id", b.rec.ID, "err", err)
				}
			}
			if b.dirty {
				saves = append(saves, b)
			}
		}
		if len(saves) > 0 {
			pending.Store(true)
			m.io.do(func(ictx context.Context) {
				defer pending.Store(false)
				for _, b := range saves {
					m.saveHeld(ictx, b.j, b.rec)
				}
			})
		}
	}
}

// saveHeld saves the changed record of a held job (a queued job's message,
// a running job's progress); it runs on storeIO's goroutine and applies
// what it learns under m.mu.
func (m *Manager) saveHeld(ctx context.Context, j *job, rec Record) {
	if rec.Status == Requested {
		// Only the message of a job still queued: another worker may
		// have cancelled it.
		msg := rec.Message
		_, _, err := m.shared.Update(ctx, rec.ID, func(r *Record) error {
			if r.Status != Requested || r.Message == msg {
				return ErrUnchanged
			}
			r.Message = msg
			return nil
		})
		if err != nil {
			m.opts.Logger.Warn("saving a queued job's message", "job_id", rec.ID, "err", err)
		}
		return
	}
	m.mu.Lock()
	base, baseRev := j.stored, j.storedRev
	m.mu.Unlock()
	held, rev, err := m.persistHeld(ctx, rec, base, baseRev)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err != nil:
		m.opts.Logger.Warn("saving a job's progress", "job_id", rec.ID, "err", err)
		j.dirty = true // saved at the next round
	case held:
		j.rev = max(j.rev, rev)
		if rev > j.storedRev {
			j.stored, j.storedRev = rec, rev
		}
	case j.local && j.cancel != nil && !j.ending && !j.rec.Status.Finished() && j.rec.Attempts == rec.Attempts:
		// Another worker took the job over: stop this run.
		j.superseded = true
		j.cancel()
	}
}

// persistHeld saves the record of a job this worker runs, unless the
// stored record shows that it no longer holds it: this worker went silent
// past the ack deadline (a stall, a lost connection) and another worker
// put the job back to run again, runs it, or failed it. It reports
// whether the record was saved, and its revision. It is called on
// storeIO's goroutine, without m.mu.
//
// base and baseRev, when baseRev is not 0, are the record as this worker
// last stored it: the write then needs no read first (revisionUpdater).
func (m *Manager) persistHeld(ctx context.Context, want, base Record, baseRev uint64) (bool, uint64, error) {
	held := true
	f := func(r *Record) error {
		held = true
		if r.Owner != m.opts.ID || r.Attempts != want.Attempts || (r.Status != InProgress && r.Status != Cancelling) {
			held = false
			return ErrUnchanged
		}
		*r = want
		return nil
	}
	_, rev, err := m.update(ctx, want.ID, base, baseRev, f)
	if err != nil {
		return true, 0, err
	}
	return held, rev, nil
}

// update applies f to the stored record of job id with compare and set:
// from base, the record as this worker last stored it at baseRev, without
// reading it first when the store allows (revisionUpdater) and baseRev is
// known; else read, then written.
func (m *Manager) update(ctx context.Context, id string, base Record, baseRev uint64, f func(*Record) error) (Record, uint64, error) {
	if ru, ok := m.shared.(revisionUpdater); ok && baseRev != 0 && base.ID == id {
		return ru.UpdateFrom(ctx, base, baseRev, f)
	}
	return m.shared.Update(ctx, id, f)
}

// dropSuperseded ends this worker's run of a job another worker took over:
// its delivery is dropped unacknowledged (the queue delivers the job to
// the new holder), and the job is followed from the shared records again.
// m.mu is held.
func (m *Manager) dropSuperseded(j *job) {
	j.d, j.fn, j.local, j.rev = nil, nil, false, 0
	delete(m.held, j.rec.ID)
	j.cancel()
	m.running--
	m.memory -= j.rec.Memory
	id := j.rec.ID
	m.io.do(func(ctx context.Context) {
		if r, ok, err := m.shared.Get(ctx, id); err == nil && ok {
			m.mu.Lock()
			if !j.local {
				m.applyRecord(r, 0)
			}
			m.mu.Unlock()
		}
	})
	m.schedule()
}
