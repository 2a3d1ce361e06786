// Package jobs runs the worker's compute jobs: a bounded number at a time
// (the rest wait as "requested"), with progress, cancellation and records
// kept in a store and queue shared by the api workers of a cluster (or the
// one worker): NATS JetStream through package jskv (Options.Shared).
// After a restart, finished jobs still answer and queued jobs stay queued
// (any worker, or this one after its restart, runs them). A job whose
// worker stopped while it ran (crashed, or shut down past its timeout) is
// run again from its stored request: put back to "requested" by the worker
// itself when it shuts down or starts again, or by the worker that takes
// the job after its ack deadline when the worker running it died.
// Record.Attempts counts its starts; after Options.MaxAttempts (3) it is
// failed as interrupted (503), so that a job that kills its worker does not
// kill them all. A job being cancelled when its worker stopped is recorded
// as cancelled.
//
// The Manager's state is in memory under one lock that is never held
// across a call to the store: its writes go through one goroutine, in
// order, each with a deadline, and what they learn is applied afterwards. Status reads, cancels, progress and metrics never
// wait on NATS; a submit waits for its own record and message only.
//
// Admission accounts for memory: each job declares an estimate of its
// need, and a queued job starts only when its estimate fits beside those of
// the jobs already running (Options.MaxMemory); until then it waits in
// first-in first-out order, its message saying why. A job whose estimate
// exceeds MaxMemory on its own must be refused before Submit.
//
// Finished records are pruned once older than Options.Retention; queued and
// running jobs never are. Options.MaxPerUser bounds the unfinished jobs of
// one user, so that one caller cannot fill the queue.
package jobs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/problem"
)

// Status is a job's state, spelled as the compute API spells it.
type Status string

// The job states.
const (
	Requested  Status = "requested"
	InProgress Status = "in progress"
	Succeeded  Status = "succeeded"
	Failed     Status = "failed"
	Cancelling Status = "cancelling"
	Cancelled  Status = "cancelled"
)

// Finished reports whether the status is final.
func (s Status) Finished() bool { return s == Succeeded || s == Failed || s == Cancelled }

// Problem is the problem-details error of a failed job: the document an
// error carrying one (a problem.Carrier) gives, else a 500 task-failed.
type Problem = problem.Problem

// Interrupted is the error of a job stopped before it finished and not run
// again: 503, saying what the job was doing. The import of an earlier
// worker's records fails their unfinished jobs with it.
func Interrupted(while Status) *Problem {
	return &Problem{Type: problem.ComputeInterrupted, Title: "Job Interrupted.", Status: http.StatusServiceUnavailable,
		Detail: "the job was interrupted: the worker stopped while it was " + string(while) + "; submit it again"}
}

// interruptedTimes is the error of a job of the shared queue interrupted
// Options.MaxAttempts times (each time its worker stopped while it ran).
func interruptedTimes(n int, while Status) *Problem {
	return &Problem{Type: problem.ComputeInterrupted, Title: "Job Interrupted.", Status: http.StatusServiceUnavailable,
		Detail: fmt.Sprintf("the job was interrupted %d times: each time the worker running it stopped (the last one while it was %s), "+
			"so it is not run again (a job that makes its worker stop, for example by running out of memory, stops here); submit it again", n, while)}
}

// DefaultMaxAttempts is Options.MaxAttempts when unset.
const DefaultMaxAttempts = 3

// Record is the persisted state of a job.
type Record struct {
	ID    string `json:"id"`
	Org   string `json:"org"`
	Topic string `json:"topic"`
	Task  string `json:"task"`
	// Workspace is the workspace of the job's target: the job belongs to
	// it, and its routes check the caller's role there.
	Workspace string `json:"workspace,omitempty"`
	User      string `json:"user,omitempty"`
	// Memory is the job's estimated memory need in bytes.
	Memory     int64           `json:"memory,omitempty"`
	Status     Status          `json:"status"`
	Progress   int             `json:"progress"`
	Message    string          `json:"message"`
	Error      *Problem        `json:"error"`
	Result     json.RawMessage `json:"result,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	// Owner is the Options.ID of the worker that runs or ran the job (with
	// a shared queue).
	Owner string `json:"owner,omitempty"`
	// Attempts counts the starts of the job: 1 when it first runs, one
	// more each time it runs again because the worker running it stopped
	// (with a shared queue, up to Options.MaxAttempts).
	Attempts int `json:"attempts,omitempty"`
}

// Func is the work of a job. It reports progress (0..100) and a message,
// honours ctx and returns the JSON-encodable result.
type Func func(ctx context.Context, progress func(percent int, message string)) (any, error)

// Options configure a Manager.
type Options struct {
	// Shared keeps the records and the queue of jobs for every worker of
	// a cluster (required; ID and Rebuild are needed with it).
	Shared Shared
	// ID names this worker in the records it runs (Record.Owner); it must
	// be stable across restarts (the worker keeps it in its data
	// directory), so that a restarted worker recognises its own jobs.
	ID string
	// Rebuild makes the Func of a job taken from the shared queue by a
	// worker that did not accept it (or after a restart) from its record
	// and the Spec.Request it was submitted with.
	Rebuild func(r Record, request []byte) (Func, error)
	// OnInterrupted, when set, is called (without the manager's lock) for
	// each job found interrupted because the worker running it stopped
	// (with Shared), before it can run again: what that attempt left
	// running elsewhere can be cancelled. r.Attempts is the interrupted
	// attempt; r.Status is requested when the job runs again, failed
	// after its last attempt, cancelled when it was being cancelled.
	OnInterrupted func(r Record)
	// MaxAttempts bounds the starts of a job of the shared queue (default
	// 3): a job found interrupted because the worker running it stopped
	// (crashed, or shut down past its timeout) is run again from its
	// stored request while it has started fewer times, and is failed as
	// interrupted (503) after that, so that a job that makes its worker
	// stop (out of memory, say) stops after MaxAttempts workers.
	MaxAttempts int
	// ProgressEvery is how often the progress of running jobs is saved for
	// the other workers to read (with Shared; default 1 s).
	ProgressEvery time.Duration
	// MaxJobs is the number of jobs that run at once (default 2).
	MaxJobs int
	// Logger receives job events (default: discard).
	Logger *slog.Logger
	// OnFinish, when set, is called once per job that reaches a final state,
	// with the manager's lock held and before the state can be seen (so a
	// client that sees a job finished also sees it counted); it must be
	// quick and must not call the Manager.
	OnFinish func(r Record, d time.Duration)
	// MaxMemory bounds the sum of the memory estimates of the running jobs
	// (0 = unbounded): a queued job starts only when it fits beside them.
	MaxMemory int64
	// Retention is how long finished records are kept (0 = forever).
	Retention time.Duration
	// MaxPerUser bounds the unfinished (queued and running) jobs of one
	// user (0 = unbounded): Submit refuses more with ErrBusy.
	MaxPerUser int
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// OnProgress, when set, is called on each progress report of a
	// running job (its id, task and percentage) from the goroutine that
	// reports it, often one of the computation's own, before the report is
	// recorded. Tests use it to inject a fault (a panic) into a running
	// computation.
	OnProgress func(id, task string, percent int)
}

// Spec describes a job to Submit.
type Spec struct {
	Org, Topic, Task, User string
	// Workspace is the workspace of the job's target.
	Workspace string
	// Memory is the estimated memory need in bytes.
	Memory int64
	// Request is what Options.Rebuild needs to make the job's Func again
	// on another worker or after a restart (with Shared; it travels in the
	// shared queue and is never logged).
	Request []byte
}

type job struct {
	rec    Record
	fn     Func
	cancel context.CancelFunc
	done   chan struct{}
	// started is closed when the job leaves the queue (it starts, or it is
	// cancelled or interrupted before it started).
	started chan struct{}
	// interrupted is set when Shutdown cancels the job.
	interrupted bool
	// With Shared: local is set while this worker holds the job (taken
	// from the queue), d is its delivery, rev the revision of rec last
	// seen, dirty whether rec changed since it was saved.
	local                     bool
	d                         Delivery
	rev                       uint64
	dirty                     bool
	doneClosed, startedClosed bool
	// cancelAsked is set when a cancel request came through the shared
	// store (cleared from it when the job ends).
	cancelAsked bool
	// superseded is set when this worker, running the job, finds its
	// record taken over by another worker (see persistHeld).
	superseded bool
	// claiming is set while the job's start is being recorded in the
	// shared store (its slot is held).
	claiming bool
	// stored is the record as this worker last wrote it, at storedRev
	// (with Shared; 0: unknown): the base of its next compare-and-set.
	stored    Record
	storedRev uint64
	// ending is set once the job's function has returned, while its
	// final record is being saved: the watcher's and the ticker's views
	// of that record must not be taken for another worker's takeover.
	ending bool
}

// closeStarted and closeDone close the job's channels once; m.mu is held.
func (j *job) closeStarted() {
	if !j.startedClosed {
		j.startedClosed = true
		close(j.started)
	}
}

func (j *job) closeDone() {
	j.closeStarted()
	if !j.doneClosed {
		j.doneClosed = true
		close(j.done)
	}
}

func newJob(r Record) *job {
	return &job{rec: r, done: make(chan struct{}), started: make(chan struct{})}
}

// Manager schedules and records jobs. It is safe for concurrent use.
type Manager struct {
	opts    Options
	shared  Shared
	mu      sync.Mutex
	jobs    map[string]*job
	queue   []*job
	running int
	// memory is the sum of the running jobs' estimates.
	memory int64
	closed bool
	wg     sync.WaitGroup
	// With Shared: wake tells the feeder a slot may be free; closing is
	// closed by Shutdown; stopBg ends the feeder, the watchers and the
	// ticker, bg waits for them.
	wake    chan struct{}
	closing chan struct{}
	// tooLarge holds the jobs of the shared queue this worker left for
	// larger workers (logged once each).
	tooLarge map[string]bool
	stopBg   context.CancelFunc
	bg       sync.WaitGroup
	// cancels holds the cancel requests seen for jobs other workers hold
	// (guarded by cancelMu, taken after mu when both are).
	cancelMu sync.Mutex
	cancels  map[string]bool
	// io runs every store and queue call, outside mu (see storeIO).
	io *storeIO
	// held are the jobs this worker holds from the shared queue (queued
	// here or running): the ticker walks these, not every record.
	held map[string]*job
	// lastPrune is when Submit last pruned.
	lastPrune time.Time
	// pruning are the pruned jobs whose stored records storeIO has yet
	// to delete.
	pruning map[string]bool
	// life is the parent context of the jobs' runs, ended by Shutdown.
	life    context.Context
	endLife context.CancelFunc
}

// NewManager watches the shared records (opts.Shared), settles the
// unfinished jobs this worker (opts.ID) was running before it stopped (run
// again, or failed after their last attempt), and starts taking jobs from
// the shared queue.
func NewManager(opts Options) (*Manager, error) {
	if opts.MaxJobs <= 0 {
		opts.MaxJobs = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(discard{}, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	m := &Manager{opts: opts, jobs: map[string]*job{}, closing: make(chan struct{}), cancels: map[string]bool{}, tooLarge: map[string]bool{},
		held: map[string]*job{}, pruning: map[string]bool{}, io: newStoreIO()}
	m.life, m.endLife = context.WithCancel(context.Background())
	if opts.Shared == nil {
		return nil, errors.New("jobs: a Manager needs its Shared store (package jskv)")
	}
	return m, m.startShared()
}

// prune deletes the finished records older than the retention; m.mu is
// held.
func (m *Manager) prune() {
	if m.opts.Retention <= 0 {
		return
	}
	cutoff := m.opts.Now().Add(-m.opts.Retention)
	for id, j := range m.jobs {
		r := j.rec
		if !r.Status.Finished() || r.FinishedAt == nil || !r.FinishedAt.Before(cutoff) {
			continue
		}
		// Forgotten here at once; the stored record is deleted by
		// storeIO (a failure is logged, and the next start prunes it),
		// and until then reads do not bring it back from the store.
		delete(m.jobs, id)
		del := func(context.Context) {
			if err := m.shared.Delete(id); err != nil {
				m.opts.Logger.Error("pruning job record", "job_id", id, "err", err)
			}
		}
		m.pruning[id] = true
		m.io.do(func(ctx context.Context) {
			del(ctx)
			m.mu.Lock()
			delete(m.pruning, id)
			m.mu.Unlock()
		})
	}
}

// Prune deletes the finished records older than Options.Retention (it also
// runs at start-up and at most once a minute on Submit).
func (m *Manager) Prune() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune()
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ErrClosed is returned by Submit after Shutdown.
var ErrClosed = errors.New("jobs: the worker is shutting down")

// ErrTooLarge is returned by Submit for a job whose memory estimate exceeds
// Options.MaxMemory on its own: it could never start.
var ErrTooLarge = errors.New("jobs: the job's memory estimate exceeds the limit")

// ErrBusy is returned by Submit when the user already has
// Options.MaxPerUser unfinished jobs.
var ErrBusy = errors.New("jobs: this user has too many jobs queued or running")

// MaxMemory is the bound on the sum of the running jobs' memory estimates
// (Options.MaxMemory; 0: none). Submit refuses a job whose estimate alone
// exceeds it (ErrTooLarge).
func (m *Manager) MaxMemory() int64 { return m.opts.MaxMemory }

// Submit records a new job and schedules it. It returns the job's record.
// With Shared, it waits (until ctx ends, at most 30 s) for the record to be
// saved and the job queued; the Manager's lock is not held meanwhile, so
// status reads and cancels of other jobs go on answering.
func (m *Manager) Submit(ctx context.Context, spec Spec, fn Func) (Record, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Record{}, ErrClosed
	}
	if m.opts.MaxMemory > 0 && spec.Memory > m.opts.MaxMemory {
		m.mu.Unlock()
		return Record{}, ErrTooLarge
	}
	if m.opts.MaxPerUser > 0 && m.unfinished(spec.User) >= m.opts.MaxPerUser {
		m.mu.Unlock()
		return Record{}, fmt.Errorf("%w (%d)", ErrBusy, m.opts.MaxPerUser)
	}
	if now := m.opts.Now(); now.Sub(m.lastPrune) >= time.Minute {
		// A walk of every record, so not on every submit.
		m.lastPrune = now
		m.prune()
	}
	j := newJob(Record{
		ID: newID(), Org: spec.Org, Topic: spec.Topic, Task: spec.Task, Workspace: spec.Workspace, User: spec.User,
		Memory: spec.Memory, Status: Requested, Message: "Job requested", CreatedAt: m.opts.Now().UTC(),
	})
	j.fn = fn
	j.rec.Message = "Job requested: waiting for a free slot"
	// Known at once (a job this worker's feeder takes before Submit
	// returns finds its Func here); failed when it cannot be queued.
	m.jobs[j.rec.ID] = j
	m.mu.Unlock()
	return m.submitShared(ctx, j, spec.Request)
}

// unfinished counts the queued and running jobs of a user; m.mu is held.
func (m *Manager) unfinished(user string) int {
	n := 0
	for _, j := range m.jobs {
		if j.rec.User == user && !j.rec.Status.Finished() {
			n++
		}
	}
	return n
}

// fits reports whether a job's estimate fits beside the running jobs'.
func (m *Manager) fits(j *job) bool {
	return m.opts.MaxMemory <= 0 || m.running == 0 || m.memory+j.rec.Memory <= m.opts.MaxMemory
}

// schedule starts queued jobs, in order, while a slot is free and the
// memory of the head of the queue fits; m.mu is held.
func (m *Manager) schedule() {
	for len(m.queue) > 0 && m.queue[0].rec.Status != Requested {
		m.queue = m.queue[1:]
	}
	for m.running < m.opts.MaxJobs && len(m.queue) > 0 {
		j := m.queue[0]
		if j.rec.Status != Requested {
			m.queue = m.queue[1:]
			continue
		}
		if !m.fits(j) {
			break
		}
		m.queue = m.queue[1:]
		now := m.opts.Now().UTC()
		m.running++
		m.memory += j.rec.Memory
		m.wg.Add(1)
		// Claimed in the store first (storeIO), then run; the slot and
		// the memory are held meanwhile.
		j.claiming = true
		m.claim(j, now)
	}
	m.explainQueue()
	m.signal()
}

// explainQueue sets the message of the queued jobs: waiting for a slot, or
// for memory when the head of the queue does not fit beside the running
// jobs; m.mu is held.
func (m *Manager) explainQueue() {
	for i, j := range m.queue {
		if j.rec.Status != Requested {
			continue
		}
		msg := "Job requested: waiting for a free slot"
		switch {
		case i == 0 && m.running < m.opts.MaxJobs && !m.fits(j):
			msg = fmt.Sprintf("Job requested: waiting for memory (needs %s; running jobs hold %s of the %s limit)",
				gib(j.rec.Memory), gib(m.memory), gib(m.opts.MaxMemory))
		case i > 0:
			msg = fmt.Sprintf("Job requested: %d job(s) ahead in the queue", i)
		}
		if msg != j.rec.Message {
			j.rec.Message, j.dirty = msg, true
		}
	}
}

func gib(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)) }

// Counts returns the number of jobs this worker runs and of queued jobs
// (with Shared, those of every worker).
func (m *Manager) Counts() (running, queued int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.jobs {
		if j.rec.Status == Requested {
			queued++
		}
	}
	return m.running, queued
}

func (m *Manager) run(ctx context.Context, j *job) {
	defer m.wg.Done()
	start := time.Now()
	m.opts.Logger.Info("job started", "job_id", j.rec.ID, "task", j.rec.Task)
	result, err := m.call(ctx, j)
	// The final record is made on a copy and saved before it is applied:
	// readers see the job running until its outcome is stored (and
	// counted by OnFinish), and the lock is not held while it is saved.
	m.mu.Lock()
	j.ending = true
	rec := j.rec
	wasInterrupted, superseded := j.interrupted, j.superseded
	m.mu.Unlock()
	now := m.opts.Now().UTC()
	rec.FinishedAt = &now
	switch {
	case err == nil:
		b, merr := marshal(result, "")
		if merr != nil {
			err = merr
			break
		}
		rec.Status, rec.Progress, rec.Message, rec.Result = Succeeded, 100, "Job succeeded", b
	case wasInterrupted:
		// Run again by any worker while it has attempts left (the
		// runner cancelled its cluster shards when ctx ended).
		m.settleInterrupted(&rec)
		err = nil
	case ctx.Err() != nil && (rec.Status == Cancelling || errors.Is(err, context.Canceled)):
		rec.Status, rec.Message = Cancelled, "Job cancelled"
	}
	if err != nil && rec.Status != Cancelled {
		rec.Status, rec.Message, rec.Progress = Failed, "Job failed", 100
		rec.Error = toProblem(err)
		var pe *geostat.PanicError
		if errors.As(err, &pe) {
			// A bug: the stack goes to the log, never to the answer. The
			// failure is recorded like any other, so the job is not run
			// again.
			m.opts.Logger.Error("job failed: internal error (panic)", "job_id", rec.ID, "task", rec.Task,
				"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		}
	}
	var rev uint64
	if !superseded {
		m.io.wait(context.Background(), func(ctx context.Context) {
			m.mu.Lock()
			base, baseRev := j.stored, j.storedRev
			m.mu.Unlock()
			held, r, perr := m.persistHeld(ctx, rec, base, baseRev)
			switch {
			case perr != nil:
				m.opts.Logger.Error("persisting job", "job_id", rec.ID, "err", perr)
			case !held:
				superseded = true
			default:
				rev = r
			}
		})
	}
	m.mu.Lock()
	if j.superseded {
		superseded = true
	}
	if !superseded {
		j.rec = rec
		j.rev = max(j.rev, rev)
	}
	j.dirty = false
	if superseded {
		j.superseded = true
		m.dropSuperseded(j)
		m.mu.Unlock()
		m.opts.Logger.Warn("job taken over: this worker went silent past the ack deadline and another worker put the job back or runs it again; this run's outcome is dropped",
			"job_id", rec.ID, "task", rec.Task, "seconds", time.Since(start).Seconds())
		return
	}
	if j.rec.Status == Requested {
		// Interrupted by the shutdown, to be run again: back to the shared
		// queue for another worker, or this one after its restart.
		msg := j.rec.Message
		m.putBack(j)
		j.rec.Message, j.fn = msg, nil
		j.cancel()
		j.closeDone() // waiters here return, the job unfinished
		m.running--
		m.memory -= j.rec.Memory
		m.schedule()
		rec := j.rec
		m.mu.Unlock()
		m.opts.Logger.Info("job interrupted by the shutdown; put back in the shared queue to run again", "job_id", rec.ID, "task", rec.Task,
			"attempt", rec.Attempts, "max_attempts", m.opts.MaxAttempts)
		return
	}
	m.release(j)
	if m.opts.OnFinish != nil {
		m.opts.OnFinish(rec, time.Since(start))
	}
	j.cancel()
	j.closeDone()
	m.running--
	m.memory -= rec.Memory
	m.schedule()
	m.mu.Unlock()
	m.opts.Logger.Info("job finished", "job_id", rec.ID, "task", rec.Task, "status", string(rec.Status), "seconds", time.Since(start).Seconds())
}

// call runs the job's function, turning a panic into a
// *geostat.PanicError (the job fails with 500 internal).
func (m *Manager) call(ctx context.Context, j *job) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = geostat.NewPanicError(p)
		}
	}()
	id, task := j.rec.ID, j.rec.Task
	note := func(msg string) {
		m.mu.Lock()
		if msg != "" && msg != j.rec.Message {
			j.rec.Message, j.dirty = msg, true
		}
		m.mu.Unlock()
	}
	return j.fn(context.WithValue(ctx, idKey{}, runOf{id, max(j.rec.Attempts, 1), note}), func(pct int, msg string) {
		if m.opts.OnProgress != nil {
			m.opts.OnProgress(id, task, pct)
		}
		if pct < 0 {
			pct = 0
		}
		if pct > 99 {
			pct = 99 // 100 is reported when the job has finished
		}
		m.mu.Lock()
		if pct > j.rec.Progress {
			j.rec.Progress, j.dirty = pct, true
		}
		if msg != "" && msg != j.rec.Message {
			j.rec.Message, j.dirty = msg, true
		}
		m.mu.Unlock()
	})
}

type idKey struct{}

// runOf is the value of idKey: the job, its attempt and what sets its
// message (Notify).
type runOf struct {
	id      string
	attempt int
	note    func(string)
}

// Notify sets the progress message of the job whose Func was given ctx (or
// a context derived from it), keeping its percentage: news the job's work
// learns outside its own progress reports, such as a cluster shard lost by
// its compute worker. It does nothing when ctx is not a job's.
func Notify(ctx context.Context, msg string) {
	if r, ok := ctx.Value(idKey{}).(runOf); ok && r.note != nil {
		r.note(msg)
	}
}

// IDFrom returns the id of the job whose Func was given ctx (or a context
// derived from it): work the job hands to other processes can be named
// after it, so that it can be found again when the job is interrupted.
func IDFrom(ctx context.Context) (string, bool) {
	r, ok := ctx.Value(idKey{}).(runOf)
	return r.id, ok
}

// AttemptFrom returns the attempt (Record.Attempts: 1 for the first run)
// of the job whose Func was given ctx, or 1 when ctx is not a job's. Work
// handed to other processes is named after it too, so that what an
// interrupted attempt left behind never mixes with the next attempt's.
func AttemptFrom(ctx context.Context) int {
	if r, ok := ctx.Value(idKey{}).(runOf); ok && r.attempt > 0 {
		return r.attempt
	}
	return 1
}

// toProblem is the error of a job whose function failed: 500 internal for
// a panic (a *geostat.PanicError, whose value and stack are left out), the
// document err carries (a user's bad data is a 4xx), else 500 task-failed.
func toProblem(err error) *Problem {
	var pe *geostat.PanicError
	if errors.As(err, &pe) {
		return &Problem{Type: problem.ComputeInternal, Title: "Internal Error.", Status: http.StatusInternalServerError,
			Detail: "the job failed on an internal error of the worker (its log has the details); it is not run again"}
	}
	var c problem.Carrier
	if errors.As(err, &c) {
		p := c.Problem()
		return &p
	}
	return &Problem{Type: problem.ComputeTaskFailed, Title: "Task Failed.", Status: http.StatusInternalServerError, Detail: err.Error()}
}

// Get returns a job's record. With Shared, a job this worker has not seen
// yet (just submitted to another worker) is read from the shared store.
func (m *Manager) Get(id string) (Record, bool) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	if ok || m.pruning[id] {
		defer m.mu.Unlock()
		if !ok {
			return Record{}, false
		}
		return j.rec, true
	}
	m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, ok, err := m.shared.Get(ctx, id)
	if err != nil {
		m.opts.Logger.Warn("reading a job record", "job_id", id, "err", err)
	}
	if !ok {
		return Record{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen := m.jobs[id]; !seen {
		m.applyRecord(r, 0)
	}
	return m.jobs[id].rec, true
}

// Cancel asks a job to stop: a queued job is cancelled at once, a running
// one moves to "cancelling" until its function returns. Finished jobs are
// left as they are. It reports whether the job exists.
//
// With Shared, a job another worker holds is cancelled through the shared
// store: a queued one at once, a running one by a cancel request its
// worker watches.
func (m *Manager) Cancel(id string) bool {
	m.mu.Lock()
	j, ok := m.jobs[id]
	if ok && j.rec.Status.Finished() {
		m.mu.Unlock()
		return true // left as it is
	}
	if !ok || !j.local {
		m.mu.Unlock()
		if !ok {
			return m.cancelShared(id)
		}
		// A job this worker knows: the answer does not wait on the store
		// for more than cancelWait (the cancel goes on meanwhile and its
		// outcome shows in the job's record).
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.cancelShared(id)
		}()
		select {
		case <-done:
		case <-time.After(cancelWait):
		}
		return true
	}
	defer m.mu.Unlock()
	m.cancelLocal(j)
	return true
}

// cancelLocal cancels a job this worker holds; m.mu is held.
func (m *Manager) cancelLocal(j *job) {
	switch j.rec.Status {
	case Requested:
		now := m.opts.Now().UTC()
		j.rec.Status, j.rec.Message, j.rec.FinishedAt = Cancelled, "Job cancelled", &now
		j.closeDone()
		m.save(j.rec)
		m.release(j)
		if m.opts.OnFinish != nil {
			m.opts.OnFinish(j.rec, 0)
		}
		m.schedule() // a job behind it may fit now
	case InProgress:
		j.rec.Status, j.rec.Message = Cancelling, "Job cancelling"
		m.save(j.rec)
		j.cancel()
	}
}

// Wait blocks until the job finishes or ctx ends, and returns its record
// and whether it finished.
func (m *Manager) Wait(ctx context.Context, id string) (Record, bool) {
	r, ok := m.await(ctx, id, func(j *job) chan struct{} { return j.done })
	return r, ok && r.Status.Finished()
}

// WaitStarted blocks until the job has left the queue (it runs, or it
// ended before it could start) or ctx ends, and returns its record and
// whether it left the queue.
func (m *Manager) WaitStarted(ctx context.Context, id string) (Record, bool) {
	return m.await(ctx, id, func(j *job) chan struct{} { return j.started })
}

// await blocks until the channel event picks of the job is closed or ctx
// ends, and returns the job's record and whether the event happened.
func (m *Manager) await(ctx context.Context, id string, event func(*job) chan struct{}) (Record, bool) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	var closing chan struct{}
	if ok && !j.local {
		closing = m.closing
	}
	m.mu.Unlock()
	if !ok {
		return Record{}, false
	}
	happened := true
	select {
	case <-event(j):
	case <-ctx.Done():
		happened = false
	case <-closing:
		// A job of the shared queue no longer followed by this worker.
		select {
		case <-event(j):
		default:
			happened = false
		}
	}
	r, _ := m.Get(id)
	return r, happened
}

// List returns the records of an organisation's jobs, newest first.
func (m *Manager) List(org string) []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, j := range m.jobs {
		if j.rec.Org == org {
			out = append(out, j.rec)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CreatedAt.After(out[b].CreatedAt) })
	return out
}

// Shutdown stops accepting jobs, fails queued ones as interrupted (with
// Shared: puts them back in the shared queue), lets running jobs finish
// until ctx ends, then cancels them (recorded as failed, interrupted; with
// Shared: put back to run again, see Options.MaxAttempts) and waits for
// them to return, at most 2 s (a job still running then is left behind, as
// after a crash). It logs at once what it waits
// for ("shutting down: waiting up to 10s for 2 running jobs", the time from
// ctx's deadline), then the fate of each job it found queued or running. It
// is idempotent.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	first := !m.closed
	m.closed = true
	if first {
		close(m.closing)
	}
	var queued, running []*job
	for _, j := range m.queue {
		if j.rec.Status == Requested {
			// Back to the shared queue: another worker, or this one
			// after its restart, runs it.
			m.putBack(j)
			queued = append(queued, j)
		}
	}
	m.queue = nil
	for _, j := range m.jobs {
		if (j.rec.Status == InProgress || j.rec.Status == Cancelling) && j.local {
			running = append(running, j)
		}
	}
	sort.Slice(running, func(a, b int) bool { return running[a].rec.CreatedAt.Before(running[b].rec.CreatedAt) })
	m.mu.Unlock()
	log := m.opts.Logger
	if first {
		wait := "until the jobs end"
		if d, ok := ctx.Deadline(); ok {
			wait = "up to " + time.Until(d).Round(time.Second).String()
		}
		log.Info(fmt.Sprintf("shutting down: waiting %s for %s", wait, plural(len(running), "running job", "running jobs")),
			"running", len(running), "queued", len(queued))
		for _, j := range queued {
			log.Info("shutdown: queued job put back in the shared queue (another worker, or this one when it starts again, runs it)", "job_id", j.rec.ID, "task", j.rec.Task)
		}
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		m.mu.Lock()
		for _, j := range m.jobs {
			if (j.rec.Status == InProgress || j.rec.Status == Cancelling) && j.cancel != nil {
				j.interrupted = true
				j.cancel()
			}
		}
		m.mu.Unlock()
		// The computations check their context in every long loop, so
		// they return within milliseconds; a job still running after
		// cancelGrace (a bug) does not hold the process: it is left
		// behind, found unfinished when the worker starts again.
		select {
		case <-done:
		case <-time.After(cancelGrace):
			log.Error(fmt.Sprintf("shutdown: running jobs did not stop within %s of their cancel; not waiting for them", cancelGrace))
		}
	}
	if !first {
		return
	}
	// What the jobs' ends queued (records, acknowledgements, put-backs)
	// is written before the background stops; a store that does not
	// answer within ioDrain is given up on (the next start settles those
	// jobs as after a crash).
	if !m.io.drain(ioDrain) {
		log.Error(fmt.Sprintf("shutdown: the job store did not take the last writes within %s; not waiting for it", ioDrain))
	}
	m.stopShared()
	m.io.stop()
	m.endLife()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range running {
		switch {
		case j.interrupted && j.rec.Status == Requested:
			log.Info("shutdown: job interrupted at the timeout, put back in the shared queue to run again", "job_id", j.rec.ID, "task", j.rec.Task,
				"attempt", j.rec.Attempts, "max_attempts", m.opts.MaxAttempts)
		case j.interrupted:
			log.Info("shutdown: job interrupted at the timeout, recorded as "+string(j.rec.Status)+" (submit it again)", "job_id", j.rec.ID, "task", j.rec.Task)
		default:
			log.Info("shutdown: job ended before the timeout", "job_id", j.rec.ID, "task", j.rec.Task, "status", string(j.rec.Status))
		}
	}
}

// ioDrain bounds how long Shutdown waits for the store to take the last
// writes.
const ioDrain = 10 * time.Second

// cancelWait bounds how long Cancel waits on the shared store for a job
// this worker knows but does not hold.
const cancelWait = 2 * time.Second

// cancelGrace bounds how long Shutdown waits for the jobs it cancelled at
// its deadline.
const cancelGrace = 2 * time.Second

// plural renders n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// marshal encodes v without HTML escaping, so that the URLs of a result
// (signed URLs carry & in their query) read as they are, not as \u0026.
func marshal(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// save queues the saving of a record in the store (storeIO); m.mu is
// held or not.
func (m *Manager) save(r Record) {
	m.io.do(func(context.Context) {
		if err := m.shared.Save(r); err != nil {
			m.opts.Logger.Error("persisting job", "job_id", r.ID, "err", err)
		}
	})
}

// launch starts a job whose slot is taken (m.running, m.memory and m.wg
// counted); m.mu is held.
func (m *Manager) launch(j *job) {
	ctx, cancel := context.WithCancel(m.life)
	j.cancel, j.ending = cancel, false
	j.closeStarted()
	go m.run(ctx, j)
}
