// Package jobs runs the worker's compute jobs: a bounded number at a time
// (the rest wait as "requested"), with progress, cancellation and records
// that persist under the data directory. After a restart, finished jobs
// still answer and jobs that were queued or running are failed with an
// error saying they were interrupted.
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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
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

// Problem is the problem-details error of a failed job.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// ProblemError is implemented by errors that know their problem shape.
type ProblemError interface {
	error
	Problem() Problem
}

// ErrorBase prefixes the problem types of job errors.
var ErrorBase = "https://errors.geostat-engine.dev/compute"

// Record is the persisted state of a job.
type Record struct {
	ID         string          `json:"id"`
	Org        string          `json:"org"`
	Topic      string          `json:"topic"`
	Task       string          `json:"task"`
	User       string          `json:"user,omitempty"`
	Status     Status          `json:"status"`
	Progress   int             `json:"progress"`
	Message    string          `json:"message"`
	Error      *Problem        `json:"error"`
	Result     json.RawMessage `json:"result,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// Func is the work of a job. It reports progress (0..100) and a message,
// honours ctx and returns the JSON-encodable result.
type Func func(ctx context.Context, progress func(percent int, message string)) (any, error)

// Options configure a Manager.
type Options struct {
	// Dir holds one JSON record per job.
	Dir string
	// MaxJobs is the number of jobs that run at once (default 2).
	MaxJobs int
	// Logger receives job events (default: discard).
	Logger *slog.Logger
	// OnFinish, when set, is called once per job that reaches a final state.
	OnFinish func(r Record, d time.Duration)
}

type job struct {
	rec    Record
	fn     Func
	cancel context.CancelFunc
	done   chan struct{}
	// interrupted is set when Shutdown cancels the job.
	interrupted bool
}

// Manager schedules and records jobs. It is safe for concurrent use.
type Manager struct {
	opts    Options
	mu      sync.Mutex
	jobs    map[string]*job
	queue   []*job
	running int
	closed  bool
	wg      sync.WaitGroup
}

// NewManager loads the records in opts.Dir (creating it), failing the ones
// that were not finished as interrupted.
func NewManager(opts Options) (*Manager, error) {
	if opts.MaxJobs <= 0 {
		opts.MaxJobs = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(discard{}, nil))
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	m := &Manager{opts: opts, jobs: map[string]*job{}}
	entries, err := os.ReadDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(opts.Dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("jobs: %w", err)
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil || r.ID == "" {
			opts.Logger.Warn("skipping unreadable job record", "file", e.Name(), "err", err)
			continue
		}
		j := &job{rec: r, done: make(chan struct{})}
		close(j.done)
		if !r.Status.Finished() {
			now := time.Now().UTC()
			j.rec.Status, j.rec.FinishedAt = Failed, &now
			j.rec.Message = "Job failed"
			j.rec.Error = &Problem{Type: ErrorBase + "/interrupted", Title: "Job Interrupted", Status: 500,
				Detail: "the worker stopped while this job was " + string(r.Status) + "; submit it again"}
			if err := m.persist(j.rec); err != nil {
				return nil, err
			}
		}
		m.jobs[r.ID] = j
	}
	return m, nil
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

// Submit records a new job and schedules it. It returns the job's record.
func (m *Manager) Submit(org, topic, task, user string, fn Func) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Record{}, ErrClosed
	}
	j := &job{fn: fn, done: make(chan struct{}), rec: Record{
		ID: newID(), Org: org, Topic: topic, Task: task, User: user,
		Status: Requested, Message: "Job requested", CreatedAt: time.Now().UTC(),
	}}
	if err := m.persist(j.rec); err != nil {
		return Record{}, err
	}
	m.jobs[j.rec.ID] = j
	m.queue = append(m.queue, j)
	// Logged before schedule starts the job, so "task submitted" always
	// precedes "job started" in the log.
	m.opts.Logger.Info("task submitted", "job_id", j.rec.ID, "topic", topic, "task", task, "org", org)
	m.schedule()
	return j.rec, nil
}

// schedule starts queued jobs while slots are free; m.mu is held.
func (m *Manager) schedule() {
	for m.running < m.opts.MaxJobs && len(m.queue) > 0 {
		j := m.queue[0]
		m.queue = m.queue[1:]
		if j.rec.Status != Requested {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		j.cancel = cancel
		now := time.Now().UTC()
		j.rec.Status, j.rec.StartedAt, j.rec.Message = InProgress, &now, "Job in progress"
		if err := m.persist(j.rec); err != nil {
			m.opts.Logger.Error("persisting job", "job_id", j.rec.ID, "err", err)
		}
		m.running++
		m.wg.Add(1)
		go m.run(ctx, j)
	}
}

func (m *Manager) run(ctx context.Context, j *job) {
	defer m.wg.Done()
	start := time.Now()
	m.opts.Logger.Info("job started", "job_id", j.rec.ID, "task", j.rec.Task)
	result, err := m.call(ctx, j)
	m.mu.Lock()
	now := time.Now().UTC()
	j.rec.FinishedAt = &now
	switch {
	case err == nil:
		b, merr := marshal(result, "")
		if merr != nil {
			err = merr
			break
		}
		j.rec.Status, j.rec.Progress, j.rec.Message, j.rec.Result = Succeeded, 100, "Job succeeded", b
	case j.interrupted:
		j.rec.Status, j.rec.Message = Failed, "Job failed"
		j.rec.Error = &Problem{Type: ErrorBase + "/interrupted", Title: "Job Interrupted", Status: 503, Detail: "the worker shut down while this job was running; submit it again"}
		err = nil
	case ctx.Err() != nil && (j.rec.Status == Cancelling || errors.Is(err, context.Canceled)):
		j.rec.Status, j.rec.Message = Cancelled, "Job cancelled"
	}
	if err != nil && j.rec.Status != Cancelled {
		j.rec.Status, j.rec.Message, j.rec.Progress = Failed, "Job failed", 100
		j.rec.Error = toProblem(err)
	}
	if perr := m.persist(j.rec); perr != nil {
		m.opts.Logger.Error("persisting job", "job_id", j.rec.ID, "err", perr)
	}
	rec := j.rec
	j.cancel()
	close(j.done)
	m.running--
	m.schedule()
	m.mu.Unlock()
	m.opts.Logger.Info("job finished", "job_id", rec.ID, "task", rec.Task, "status", string(rec.Status), "seconds", time.Since(start).Seconds())
	if m.opts.OnFinish != nil {
		m.opts.OnFinish(rec, time.Since(start))
	}
}

// call runs the job's function, turning a panic into an error.
func (m *Manager) call(ctx context.Context, j *job) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			m.opts.Logger.Error("job panicked", "job_id", j.rec.ID, "panic", p)
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return j.fn(ctx, func(pct int, msg string) {
		if pct < 0 {
			pct = 0
		}
		if pct > 99 {
			pct = 99 // 100 is reported when the job has finished
		}
		m.mu.Lock()
		if pct > j.rec.Progress {
			j.rec.Progress = pct
		}
		if msg != "" {
			j.rec.Message = msg
		}
		m.mu.Unlock()
	})
}

func toProblem(err error) *Problem {
	var pe ProblemError
	if errors.As(err, &pe) {
		p := pe.Problem()
		return &p
	}
	return &Problem{Type: ErrorBase + "/task-failed", Title: "Task Failed", Status: 500, Detail: err.Error()}
}

// Get returns a job's record.
func (m *Manager) Get(id string) (Record, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return Record{}, false
	}
	return j.rec, true
}

// Cancel asks a job to stop: a queued job is cancelled at once, a running
// one moves to "cancelling" until its function returns. Finished jobs are
// left as they are. It reports whether the job exists.
func (m *Manager) Cancel(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return false
	}
	switch j.rec.Status {
	case Requested:
		now := time.Now().UTC()
		j.rec.Status, j.rec.Message, j.rec.FinishedAt = Cancelled, "Job cancelled", &now
		close(j.done)
		if err := m.persist(j.rec); err != nil {
			m.opts.Logger.Error("persisting job", "job_id", id, "err", err)
		}
		if m.opts.OnFinish != nil {
			go m.opts.OnFinish(j.rec, 0)
		}
	case InProgress:
		j.rec.Status, j.rec.Message = Cancelling, "Job cancelling"
		j.cancel()
	}
	return true
}

// Wait blocks until the job finishes or ctx ends, and returns its record
// and whether it finished.
func (m *Manager) Wait(ctx context.Context, id string) (Record, bool) {
	m.mu.Lock()
	j, ok := m.jobs[id]
	m.mu.Unlock()
	if !ok {
		return Record{}, false
	}
	select {
	case <-j.done:
	case <-ctx.Done():
	}
	r, _ := m.Get(id)
	return r, r.Status.Finished()
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

// Shutdown stops accepting jobs, fails queued ones as interrupted, lets
// running jobs finish until ctx ends, then cancels them (recorded as failed,
// interrupted) and waits for them to return. It logs at once what it waits
// for ("shutting down: waiting up to 10s for 2 running jobs", the time from
// ctx's deadline), then the fate of each job it found queued or running. It
// is idempotent.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	first := !m.closed
	m.closed = true
	var queued, running []*job
	for _, j := range m.queue {
		if j.rec.Status == Requested {
			now := time.Now().UTC()
			j.rec.Status, j.rec.FinishedAt, j.rec.Message = Failed, &now, "Job failed"
			j.rec.Error = &Problem{Type: ErrorBase + "/interrupted", Title: "Job Interrupted", Status: 503, Detail: "the worker shut down before this job started; submit it again"}
			close(j.done)
			_ = m.persist(j.rec)
			queued = append(queued, j)
		}
	}
	m.queue = nil
	for _, j := range m.jobs {
		if j.rec.Status == InProgress || j.rec.Status == Cancelling {
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
			log.Info("shutdown: queued job failed as interrupted (never started; submit it again)", "job_id", j.rec.ID, "task", j.rec.Task)
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
		<-done
	}
	if !first {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range running {
		switch {
		case j.interrupted:
			log.Info("shutdown: job interrupted at the timeout, recorded as failed (submit it again)", "job_id", j.rec.ID, "task", j.rec.Task)
		default:
			log.Info("shutdown: job ended before the timeout", "job_id", j.rec.ID, "task", j.rec.Task, "status", string(j.rec.Status))
		}
	}
}

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

// persist writes a record atomically (temporary file, fsync, rename).
func (m *Manager) persist(r Record) error {
	b, err := marshal(r, "  ")
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	if err := atomicfile.Write(m.opts.Dir, filepath.Join(m.opts.Dir, r.ID+".json"), b, nil); err != nil {
		return fmt.Errorf("jobs: saving %s: %w", r.ID, err)
	}
	return nil
}
