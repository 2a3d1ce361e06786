package bmstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// JobKind is the kind of a block model job (A.6.1).
type JobKind string

// Job kinds.
const (
	JobCreate JobKind = "create"
	JobUpdate JobKind = "update"
	JobQuery  JobKind = "query"
)

// JobStatus is a job's state (A.6.2).
type JobStatus string

// Job statuses.
const (
	PendingUpload JobStatus = "PENDING_UPLOAD"
	Queued        JobStatus = "QUEUED"
	Processing    JobStatus = "PROCESSING"
	Complete      JobStatus = "COMPLETE"
	Failed        JobStatus = "FAILED"
)

// ErrConflict is returned by TransitionJob when the job is not in the
// expected state or the transition is not legal (the route's 409).
var ErrConflict = errors.New("job state conflict")

var legal = map[JobStatus][]JobStatus{
	PendingUpload: {Queued, Failed},
	Queued:        {Processing, Failed},
	Processing:    {Complete, Failed},
}

// LegalTransition reports whether the state machine allows from → to.
func LegalTransition(from, to JobStatus) bool {
	for _, t := range legal[from] {
		if t == to {
			return true
		}
	}
	return false
}

// Job is a block model job record.
type Job struct {
	ID        string          `json:"id"`
	ModelID   string          `json:"model_id"`
	Kind      JobKind         `json:"kind"`
	Status    JobStatus       `json:"job_status"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

func (s *Store) jobPath(id string) string { return filepath.Join(s.root, "jobs", id+".json") }

// CreateJob records a new job (ID empty: a fresh UUID); its status must be
// PendingUpload or Queued (create and query jobs start QUEUED).
func (s *Store) CreateJob(j Job) (Job, error) {
	if j.ID == "" {
		j.ID = NewUUID()
	}
	if err := validID(j.ID); err != nil {
		return j, err
	}
	switch j.Kind {
	case JobCreate, JobUpdate, JobQuery:
	default:
		return j, fmt.Errorf("bmstore: job kind %q", j.Kind)
	}
	if j.Status != PendingUpload && j.Status != Queued {
		return j, fmt.Errorf("bmstore: a job starts PENDING_UPLOAD or QUEUED, not %s", j.Status)
	}
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if _, err := os.Stat(s.jobPath(j.ID)); err == nil {
		return j, fmt.Errorf("bmstore: job %s exists", j.ID)
	}
	now := time.Now().UTC()
	j.CreatedAt, j.UpdatedAt = now, now
	return j, writeJSON(filepath.Join(s.root, "tmp"), s.jobPath(j.ID), j, nil)
}

// GetJob returns a job record.
func (s *Store) GetJob(id string) (Job, error) {
	var j Job
	if err := validID(id); err != nil {
		return j, err
	}
	return j, readJSON(s.jobPath(id), &j)
}

// TransitionJob moves a job from `from` to `to` (compare-and-set) and sets
// its payload; ErrConflict when the job is not in `from` or the transition
// is illegal.
func (s *Store) TransitionJob(id string, from, to JobStatus, payload json.RawMessage) (Job, error) {
	return s.rewriteJob(id, from, func(j *Job) error {
		if !LegalTransition(from, to) {
			return fmt.Errorf("bmstore: job %s: %s → %s: %w", id, from, to, ErrConflict)
		}
		j.Status, j.Payload, j.UpdatedAt = to, payload, time.Now().UTC()
		return nil
	})
}

// rewriteJob reads job id, checks that it is in status (ErrConflict
// otherwise), changes it with f and writes it, all under the jobs' lock.
func (s *Store) rewriteJob(id string, status JobStatus, f func(*Job) error) (Job, error) {
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	j, err := s.GetJob(id)
	if err != nil {
		return j, err
	}
	if j.Status != status {
		return j, fmt.Errorf("bmstore: job %s is %s, not %s: %w", id, j.Status, status, ErrConflict)
	}
	if err := f(&j); err != nil {
		return j, err
	}
	return j, writeJSON(filepath.Join(s.root, "tmp"), s.jobPath(id), j, nil)
}

// DeleteJob removes a job record (retention).
func (s *Store) DeleteJob(id string) error {
	if err := validID(id); err != nil {
		return err
	}
	s.jobMu.Lock()
	defer s.jobMu.Unlock()
	if err := os.Remove(s.jobPath(id)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("bmstore: delete job: %w", err)
	}
	return nil
}

// ListJobs returns the ids of every job record, sorted.
func (s *Store) ListJobs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, "jobs"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bmstore: list jobs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && validID(id) == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// SetJobPayload replaces the payload of a job that is in status (compare
// and set: ErrConflict otherwise), keeping its times: the area forgets the
// files it deleted of a finished job.
func (s *Store) SetJobPayload(id string, status JobStatus, payload json.RawMessage) (Job, error) {
	return s.rewriteJob(id, status, func(j *Job) error {
		j.Payload = payload
		return nil
	})
}
