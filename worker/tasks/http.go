package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// MaxRequestBytes bounds a task request body (413 above).
const MaxRequestBytes = 1 << 20

// Topics of the compute routes.
const (
	TopicSeed    = "geostat"
	TopicCurrent = "geostatistics"
)

type preparer func(ctx context.Context, env *Env, req Request) (Plan, error)

// taskTable maps the task names of each topic to their preparers.
var taskTable = map[string]map[string]preparer{
	TopicSeed: {
		"knn":               PrepareKNN,
		"conditional-tbsim": PrepareSimulation,
		"simulation-report": PrepareReport,
		"break-ties":        PrepareBreakTies,
	},
	TopicCurrent: {
		"knn":                       PrepareKNN,
		"conditional-turning-bands": PrepareSimulation,
		"simulation-report":         PrepareReport,
		"break-ties":                PrepareBreakTies,
		"kriging":                   PrepareKriging,
		"variogram-model":           PrepareVariogramModel,
		"location-wise":             PrepareLocationWise,
		"loss-calculation":          PrepareLossCalculation,
		"profit-calculation":        PrepareProfitCalculation,
		"declustering":              PrepareDeclustering,
		"continuous-distribution":   PrepareDistribution,
		"normal-score":              PrepareNormalScore,
		"idw":                       PrepareIDW,
		"consim":                    PrepareConsim,
	},
}

// Tasks returns the task names of a topic, sorted.
func Tasks(topic string) []string {
	var out []string
	for name := range taskTable[topic] {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ComputeOptions configure the compute routes.
type ComputeOptions struct {
	Env  *Env
	Jobs *jobs.Manager
	// SyncWait is how long a submit of the seed's shape waits for its job
	// before answering 303 instead of 200 (default 60 s).
	SyncWait time.Duration
	// OnSubmit, when set, is told of each accepted or refused submission.
	OnSubmit func(topic, task string, status int)
	// Roles re-checks a job's submitter's roles when the job starts and
	// before it writes its results (the worker's identity store). Without
	// it a job runs on the roles checked at submit, and a job queued by
	// another worker cannot run here.
	Roles JobRoles
}

type compute struct {
	opts ComputeOptions
	deps server.Deps
	log  *slog.Logger
}

// Register adds the compute routes to mux:
//
//	POST   /compute/orgs/{org_id}/{topic}/{task}
//	GET    /compute/orgs/{org_id}/{topic}/{task}/{job_id}/status
//	GET    /compute/orgs/{org_id}/{topic}/{task}/{job_id}
//	DELETE /compute/orgs/{org_id}/{topic}/{task}/{job_id}
//
// for the topics geostat (the seed's shapes, synchronous by default) and
// geostatistics (the current client's shapes, always 303 to the job status).
//
// A job belongs to the workspace of its target (the object it writes): its
// status and results need a role in that workspace, cancelling it needs
// editor or owner there (a viewer gets 403); without a role the job does
// not exist for the caller (404). A synchronous submit waiting for its job
// gives back its request slots (server.Detach).
func Register(mux server.Router, deps server.Deps, opts ComputeOptions) {
	if opts.SyncWait <= 0 {
		opts.SyncWait = 60 * time.Second
	}
	if opts.Env != nil && opts.Env.writeLocks == nil {
		opts.Env.writeLocks = newKeyedLocks()
	}
	c := &compute{opts: opts, deps: deps, log: deps.Logger}
	for _, topic := range []string{TopicSeed, TopicCurrent} {
		prefix := "/compute/orgs/{org_id}/" + topic + "/{task}"
		t := topic
		mux.Handle("POST "+prefix, deps.Auth.RequireOrg(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.submit(w, r, t) })))
		mux.Handle("GET "+prefix+"/{job_id}/status", deps.Auth.RequireOrg(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.status(w, r, t) })))
		mux.Handle("GET "+prefix+"/{job_id}", deps.Auth.RequireOrg(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.results(w, r, t) })))
		mux.Handle("DELETE "+prefix+"/{job_id}", deps.Auth.RequireOrg(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.cancel(w, r, t) })))
	}
}

// writeError answers an error in the problem-details shape and returns the
// status it answered with.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) int {
	server.WriteProblem(w, r, log, err)
	return problem.StatusOf(err)
}

func (c *compute) submit(w http.ResponseWriter, r *http.Request, topic string) {
	org, task := r.PathValue("org_id"), r.PathValue("task")
	status := http.StatusOK
	defer func() {
		if c.opts.OnSubmit != nil {
			c.opts.OnSubmit(topic, task, status)
		}
	}()
	fail := func(err error) { status = writeError(w, r, c.log, err) }
	prep, ok := taskTable[topic][task]
	if !ok {
		fail(&StatusError{Status: http.StatusNotFound, Type: problem.ComputeUnknownTask, Title: "Unknown Task.",
			Detail: fmt.Sprintf("no task %q under /%s (tasks: %s)", task, topic, strings.Join(Tasks(topic), ", "))})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			fail(&StatusError{Status: http.StatusRequestEntityTooLarge, Type: problem.ComputePayloadTooLarge, Title: "Payload Too Large.",
				Detail: fmt.Sprintf("task requests are limited to %d bytes", MaxRequestBytes)})
			return
		}
		fail(&StatusError{Status: http.StatusBadRequest, Type: problem.ComputeBadJSON, Title: "Bad Request.", Detail: "reading the body: " + err.Error()})
		return
	}
	if err := objects.CheckJSON(body); err != nil {
		fail(&StatusError{Status: http.StatusBadRequest, Type: problem.ComputeBadJSON, Title: "Bad Request.", Detail: err.Error()})
		return
	}
	principal := server.PrincipalFrom(r.Context())
	shape := shapeOf(topic)
	env := *c.opts.Env
	if env.PublicURL == "" && c.deps.BaseURL != nil {
		env.PublicURL = c.deps.BaseURL(r)
	}
	// The job belongs to the workspace of its target: the first workspace
	// the task is allowed to write to.
	var workspace string
	access := accessFor(r.Context(), principal)
	var rc *roleCheck
	if c.opts.Roles != nil {
		rc = &roleCheck{roles: c.opts.Roles, user: principal.User.ID}
		access = rc.record(access)
		rc.guard(&env)
	}
	var needs Needs
	req := Request{Org: org, Shape: shape, Body: body, User: principal.User, Needs: &needs,
		Access: func(org, ws string, write bool) error {
			err := access(org, ws, write)
			if err == nil && write && workspace == "" {
				workspace = ws
			}
			return err
		}}
	plan, err := prep(r.Context(), &env, req)
	if err != nil {
		fail(err)
		return
	}
	if workspace == "" {
		fail(fmt.Errorf("task %s checked no target workspace", task))
		return
	}
	queued, err := json.Marshal(queuedRequest{Org: org, Topic: topic, Task: task, Body: body, User: principal.User,
		PublicURL: env.PublicURL})
	if err != nil {
		fail(err)
		return
	}
	spec := jobs.Spec{Org: org, Topic: topic, Task: task, User: principal.User.ID, Workspace: workspace, Memory: needs.Memory, Request: queued}
	rec, err := c.opts.Jobs.Submit(r.Context(), spec, func(ctx context.Context, progress func(int, string)) (any, error) {
		if rc != nil {
			if err := rc.atStart(); err != nil {
				return nil, err
			}
		}
		out, err := plan.Run(geostat.WithWorkers(ctx, env.Threads), progress)
		return out, runError(err)
	})
	switch {
	case errors.Is(err, jobs.ErrBusy):
		w.Header().Set("Retry-After", "10")
		fail(&StatusError{Status: http.StatusTooManyRequests, Type: problem.TooManyRequests, Title: "Too Many Requests.",
			Detail: "you have too many jobs queued or running; wait for some to finish: " + err.Error()})
		return
	case errors.Is(err, jobs.ErrTooLarge):
		fail(&ValidationError{Params: []InvalidParam{{Name: "parameters", Reason: fmt.Sprintf(
			"the job needs about %.1f GiB of memory, more than the worker's limit", float64(needs.Memory)/(1<<30))}}})
		return
	case err != nil:
		fail(&StatusError{Status: http.StatusServiceUnavailable, Type: problem.ComputeUnavailable, Title: "Service Unavailable.", Detail: err.Error()})
		return
	}
	location := fmt.Sprintf("/compute/orgs/%s/%s/%s/%s/status", org, topic, task, rec.ID)
	if topic == TopicSeed && !preferAsync(r) {
		server.Detach(r) // waiting holds no request slot
		ctx, cancel := context.WithTimeout(r.Context(), c.opts.SyncWait)
		final, done := c.opts.Jobs.Wait(ctx, rec.ID)
		cancel()
		if done {
			switch final.Status {
			case jobs.Succeeded:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				w.Write(append(final.Result, '\n'))
				return
			case jobs.Failed, jobs.Cancelled:
				p := jobProblem(final).With("job_id", final.ID)
				status = p.Status
				problem.Write(w, p)
				return
			}
		}
	}
	status = http.StatusSeeOther
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// jobProblem is the error of a failed or cancelled job.
func jobProblem(r jobs.Record) jobs.Problem {
	if r.Error != nil {
		return *r.Error
	}
	return jobs.Problem{Type: problem.ComputeCancelled, Title: "Job Cancelled.", Status: http.StatusConflict, Detail: "the job was cancelled"}
}

func preferAsync(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), "respond-async") {
				return true
			}
		}
	}
	return false
}

// accessFor checks workspace roles for a principal, answering as the object
// API does: no role → 404, a deleted workspace → 410 workspace-service/gone,
// too low a role → 403 insufficient-role.
func accessFor(ctx context.Context, p *server.Principal) Access {
	return func(org, ws string, write bool) error {
		acc, err := p.Resolve(ctx, org, ws)
		if err != nil {
			return fmt.Errorf("resolving the role in workspace %s: %w", ws, err)
		}
		role := acc.Role
		if role == "" || acc.State == server.WorkspaceUnknown {
			return store.ErrNotFound("", fmt.Sprintf("workspace %s not found", ws))
		}
		if acc.State == server.WorkspaceDeleted {
			g := server.WorkspaceGone(ws)
			return problem.New(g.Status, g.Type, g.Title, g.Detail)
		}
		min := server.RoleViewer
		if write {
			min = server.RoleEditor
		}
		if !role.AtLeast(min) {
			permitted := []server.Role{server.RoleOwner, server.RoleEditor}
			if !write {
				permitted = append(permitted, server.RoleViewer)
			}
			e := store.NewError(http.StatusForbidden, store.TypeInsufficient, "Insufficient Role.",
				fmt.Sprintf("writing to workspace %s needs the role %s or higher", ws, min))
			e.Extra = map[string]any{"your_role": role, "permitted_roles": permitted}
			return e
		}
		return nil
	}
}

// job finds the job of a status/results/cancel route, checking that it
// belongs to the route's organisation, topic and task and that the caller
// has a role in the job's workspace (else 404, as for objects), at least
// min (else 403).
func (c *compute) job(w http.ResponseWriter, r *http.Request, topic string, min server.Role) (jobs.Record, bool) {
	id := r.PathValue("job_id")
	notFound := &StatusError{Status: http.StatusNotFound, Type: problem.ComputeJobNotFound, Title: "Job Not Found.",
		Detail: fmt.Sprintf("no job %s for this task", id)}
	rec, ok := c.opts.Jobs.Get(id)
	if !ok || rec.Org != r.PathValue("org_id") || rec.Topic != topic || rec.Task != r.PathValue("task") {
		writeError(w, r, c.log, notFound)
		return jobs.Record{}, false
	}
	p := server.PrincipalFrom(r.Context())
	role, ok := p.Role(rec.Org, rec.Workspace)
	if rec.Workspace == "" { // a record from before jobs had a workspace: its submitter only
		role, ok = server.RoleOwner, rec.User != "" && rec.User == p.User.ID
	}
	if !ok {
		writeError(w, r, c.log, notFound)
		return jobs.Record{}, false
	}
	if !role.AtLeast(min) {
		e := store.NewError(http.StatusForbidden, store.TypeInsufficient, "Insufficient Role.",
			fmt.Sprintf("cancelling a job of workspace %s needs the role %s or higher", rec.Workspace, min))
		e.Extra = map[string]any{"your_role": role, "permitted_roles": []server.Role{server.RoleOwner, server.RoleEditor}}
		writeError(w, r, c.log, e)
		return jobs.Record{}, false
	}
	return rec, true
}

func (c *compute) links(r *http.Request, topic string, rec jobs.Record) map[string]any {
	base := fmt.Sprintf("/compute/orgs/%s/%s/%s/%s", rec.Org, topic, rec.Task, rec.ID)
	l := map[string]any{"status": base + "/status"}
	if rec.Status.Finished() {
		l["results"] = base
	} else {
		l["cancel"] = base
	}
	return l
}

func (c *compute) status(w http.ResponseWriter, r *http.Request, topic string) {
	rec, ok := c.job(w, r, topic, server.RoleViewer)
	if !ok {
		return
	}
	body := map[string]any{"status": rec.Status, "progress": rec.Progress, "message": rec.Message, "error": rec.Error,
		"links": c.links(r, topic, rec)}
	code := http.StatusAccepted
	if rec.Status.Finished() {
		code = http.StatusOK
	}
	server.WriteJSON(w, code, body)
}

func (c *compute) results(w http.ResponseWriter, r *http.Request, topic string) {
	rec, ok := c.job(w, r, topic, server.RoleViewer)
	if !ok {
		return
	}
	var results any
	if rec.Result != nil {
		results = json.RawMessage(rec.Result)
	}
	code := http.StatusAccepted
	if rec.Status.Finished() {
		code = http.StatusOK
	}
	server.WriteJSON(w, code, map[string]any{"status": rec.Status, "progress": rec.Progress, "message": rec.Message,
		"results": results, "error": rec.Error})
}

func (c *compute) cancel(w http.ResponseWriter, r *http.Request, topic string) {
	rec, ok := c.job(w, r, topic, server.RoleEditor)
	if !ok {
		return
	}
	c.opts.Jobs.Cancel(rec.ID)
	w.WriteHeader(http.StatusNoContent)
}
