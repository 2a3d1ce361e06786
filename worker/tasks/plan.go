package tasks

import (
	"context"

	"github.com/geostat-engine/geostat/worker/store"
)

// Request is a submitted task before validation.
type Request struct {
	Org   string
	Shape Shape
	Body  []byte
	// User is the caller (recorded as the author of new versions).
	User store.User
	// Access checks the caller's role in a workspace.
	Access Access
	// Needs, when set, receives the job's estimated needs as the request
	// is prepared.
	Needs *Needs
}

// Plan is a validated task, ready to run as a job.
type Plan interface {
	// Run computes and writes the result, reporting progress, and returns
	// the task result document.
	Run(ctx context.Context, progress func(percent int, message string)) (any, error)
}

// scaleProgress maps a library's (done, total) onto [lo, hi] percent.
func scaleProgress(progress func(int, string), lo, hi int, msg string) func(done, total int) {
	return func(done, total int) {
		if total <= 0 {
			return
		}
		progress(lo+(hi-lo)*done/total, msg)
	}
}
