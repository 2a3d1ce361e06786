package tasks

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/store"
)

// queuedRequest is what a job keeps in a shared job queue (jobs.Spec.Request)
// so that any api worker, or this one after a restart, can run it: the
// route, the body and the caller as they were at submit. It is never
// logged. It names the caller (its user) but carries neither its token nor
// its roles: the worker that runs the job resolves the user's roles then,
// from its own identity view, so a request in the queue grants nothing.
type queuedRequest struct {
	Org       string          `json:"org"`
	Topic     string          `json:"topic"`
	Task      string          `json:"task"`
	Body      json.RawMessage `json:"body"`
	User      store.User      `json:"user"`
	PublicURL string          `json:"public_url,omitempty"`
}

// shapeOf is the request shape of a topic's routes: the seed's for
// /geostat, the current client's otherwise.
func shapeOf(topic string) Shape {
	if topic == TopicSeed {
		return SeedShape
	}
	return CurrentShape
}

// Rebuilder returns the jobs.Options.Rebuild of the compute routes that
// Register added with the same opts: it makes a job's Func from the
// request it was queued with. The Func prepares the task again when the
// job starts (the objects the request names are read then, with the
// roles the caller holds then, opts.Roles), then runs it as a job
// submitted here would, re-checking the role of each workspace it writes
// to just before the write.
func Rebuilder(opts ComputeOptions) func(rec jobs.Record, request []byte) (jobs.Func, error) {
	return func(rec jobs.Record, request []byte) (jobs.Func, error) {
		var q queuedRequest
		if err := json.Unmarshal(request, &q); err != nil {
			return nil, fmt.Errorf("the queued request of job %s cannot be read: %w", rec.ID, err)
		}
		if q.Org != rec.Org || q.Topic != rec.Topic || q.Task != rec.Task {
			return nil, fmt.Errorf("the queued request of job %s is for another route", rec.ID)
		}
		prep, ok := taskTable[q.Topic][q.Task]
		if !ok {
			return nil, fmt.Errorf("job %s: this worker has no task %q under /%s", rec.ID, q.Task, q.Topic)
		}
		if opts.Roles == nil {
			return nil, fmt.Errorf("job %s was queued by another worker and this worker has no role resolver to check its submitter's roles", rec.ID)
		}
		shape := shapeOf(q.Topic)
		return func(ctx context.Context, progress func(int, string)) (any, error) {
			env := *opts.Env
			if q.PublicURL != "" {
				env.PublicURL = q.PublicURL
			}
			rc := &roleCheck{roles: opts.Roles, user: q.User.ID}
			rc.guard(&env)
			progress(0, "preparing the job (reading its objects)")
			plan, err := prep(ctx, &env, Request{Org: q.Org, Shape: shape, Body: q.Body, User: q.User, Needs: &Needs{}, Access: rc.check})
			if err != nil {
				return nil, err
			}
			out, err := plan.Run(geostat.WithWorkers(ctx, env.Threads), progress)
			return out, runError(err)
		}, nil
	}
}
