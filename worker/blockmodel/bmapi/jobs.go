package bmapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
	"github.com/geostat-engine/geostat/worker/jobs"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// PendingLifetime is how long an update job waits for /uploaded before it
// fails as expired (A.6.2, OPEN-21).
const PendingLifetime = 24 * time.Hour

// MaxOpenJobs bounds the update jobs of one model not started yet (waiting
// for their upload, or queued): a PATCH …/blocks past it answers 429. The
// model's record lists them, so the bound is also that list's. Jobs past
// PendingLifetime are expired first, so they do not count.
const MaxOpenJobs = 256

// jobState is what the area keeps in a job record's payload: the request
// while the job waits, its outcome once finished. The job route renders
// the A.6.1 payload from it, signing fresh URLs at each read.
type jobState struct {
	Org  string     `json:"org"`
	WS   string     `json:"ws"`
	User store.User `json:"user"`
	// Update job: the request body, the reserved version uuid and the blob
	// name of the upload.
	Update      json.RawMessage `json:"update,omitempty"`
	VersionUUID string          `json:"version_uuid,omitempty"`
	Upload      string          `json:"upload,omitempty"`
	NeedsFile   bool            `json:"needs_file,omitempty"`
	// FileRows bounds the upload's data rows, read when it was confirmed
	// (a geometry change's; 0: not read).
	FileRows int64 `json:"file_rows,omitempty"`
	// Query job: the request body and the version queried.
	Query        json.RawMessage `json:"query,omitempty"`
	QueryVersion int             `json:"query_version,omitempty"`
	// Outcome: the new version (create, update), the query output's blob,
	// or the failure and its error file's blob.
	Version   *blockmodel.Version `json:"version,omitempty"`
	Download  string              `json:"download,omitempty"`
	Problem   *problem.Problem    `json:"problem,omitempty"`
	ErrorFile string              `json:"error_file,omitempty"`
}

// queuedRequest is the jobs.Spec Request of the area's jobs: the job layer
// hands it to Rebuild on the worker that runs the job.
type queuedRequest struct {
	JobID string `json:"job_id"`
}

// blobURL is an absolute signed URL of a blob of the workspace for op
// (upload or download), valid for the area's expiry: the worker's blob
// routes (server) verify it.
func (a *Area) blobURL(r *http.Request, op, org, ws, name string) string {
	p := "/blobs/" + org + "/" + ws + "/" + name
	return strings.TrimRight(a.baseURL(r), "/") + p + "?" + a.signer.Query(op, p, a.now().Add(a.expiry))
}

// JobResponse is the answer of GET …/jobs/{job_id} (A.6.1).
type JobResponse struct {
	JobStatus bmstore.JobStatus `json:"job_status"`
	Payload   any               `json:"payload"`
}

// job serves GET …/jobs/{job_id}: the status and the payload, with freshly
// signed upload (PENDING_UPLOAD) and download (COMPLETE query, FAILED with
// an error file) URLs; a download_url is null past OutputLifetime.
func (a *Area) job(w http.ResponseWriter, r *http.Request, c *call) {
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	j, st, err := a.jobOf(md, r.PathValue("job_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if j.Status == bmstore.PendingUpload && a.now().Sub(j.CreatedAt) > PendingLifetime {
		a.expire(md, j, st)
		if j, st, err = a.jobOf(md, j.ID); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	out := JobResponse{JobStatus: j.Status}
	switch j.Status {
	case bmstore.PendingUpload:
		p := map[string]any{"upload_url": nil}
		if st.Upload != "" {
			p["upload_url"] = a.blobURL(r, "upload", st.Org, st.WS, st.Upload)
		}
		out.Payload = p
	case bmstore.Complete:
		// A query's output is kept OutputLifetime after the job's end.
		switch {
		case st.Version != nil:
			out.Payload = st.Version
		case j.Kind == bmstore.JobQuery && (st.Download == "" || a.outputsExpired(j)):
			out.Payload = map[string]any{"download_url": nil}
		case st.Download != "":
			out.Payload = map[string]string{"download_url": a.blobURL(r, "download", st.Org, st.WS, st.Download)}
		}
	case bmstore.Failed:
		if st.Problem != nil {
			p := map[string]any{"type": st.Problem.Type, "title": st.Problem.Title, "status": st.Problem.Status,
				"detail": st.Problem.Detail, "download_url": nil}
			if st.ErrorFile != "" && !a.outputsExpired(j) {
				p["download_url"] = a.blobURL(r, "download", st.Org, st.WS, st.ErrorFile)
			}
			out.Payload = p
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// jobOf reads a job of a model (404 not-found for another model's).
func (a *Area) jobOf(md *model, id string) (bmstore.Job, jobState, error) {
	id = strings.ToLower(id)
	j, err := a.bm.GetJob(id)
	if errors.Is(err, bmstore.ErrNotFound) || (err == nil && j.ModelID != md.id()) {
		return j, jobState{}, errNotFound("block model %s has no job %s", md.id(), id)
	}
	if err != nil {
		return j, jobState{}, err
	}
	var st jobState
	if len(j.Payload) > 0 {
		if err := json.Unmarshal(j.Payload, &st); err != nil {
			return j, st, fmt.Errorf("bmapi: job %s payload: %w", id, err)
		}
	}
	return j, st, nil
}

// expire fails a pending job past PendingLifetime.
func (a *Area) expire(md *model, j bmstore.Job, st jobState) {
	if a.expireJob(j, st) {
		a.closeJob(md.id(), j.ID)
	}
}

// expireJob moves a pending job to FAILED job/expired; false when it was
// not pending any more.
func (a *Area) expireJob(j bmstore.Job, st jobState) bool {
	st.Problem = &problem.Problem{Type: problem.BlockModelJobExpired, Title: "Job Expired.", Status: http.StatusGone,
		Detail: fmt.Sprintf("no upload was confirmed within %v of the job's start", PendingLifetime)}
	if _, err := a.bm.TransitionJob(j.ID, bmstore.PendingUpload, bmstore.Failed, jsonRaw(st)); err != nil {
		return false
	}
	a.forgetUpload(j.ID, st)
	return true
}

// sweepOpenJobs expires the model's pending jobs past PendingLifetime and
// drops from its open jobs those started or finished meanwhile (or gone);
// it reports whether the list changed. The caller holds a.mu and saves the
// model.
func (a *Area) sweepOpenJobs(md *model) (bool, error) {
	keep := md.doc.OpenJobs[:0:0]
	for _, id := range md.doc.OpenJobs {
		j, st, err := a.jobOf(md, id)
		switch {
		case problem.StatusOf(err) == http.StatusNotFound:
			continue
		case err != nil:
			return false, err
		case j.Status == bmstore.PendingUpload && a.now().Sub(j.CreatedAt) > PendingLifetime:
			if a.expireJob(j, st) {
				continue
			}
			keep = append(keep, id) // confirmed meanwhile: queued
		case j.Status == bmstore.PendingUpload || j.Status == bmstore.Queued:
			keep = append(keep, id)
		}
	}
	changed := len(keep) != len(md.doc.OpenJobs)
	md.doc.OpenJobs = keep
	return changed, nil
}

// UpdateWithURL is the 202 answer of PATCH …/blocks (the client's
// UpdateWithUrl).
type UpdateWithURL struct {
	JobURL      string         `json:"job_url"`
	JobUUID     string         `json:"job_uuid"`
	UploadURL   *string        `json:"upload_url"`
	VersionUUID string         `json:"version_uuid"`
	Changes     map[string]any `json:"changes"`
}

// startUpdate serves PATCH …/blocks (A.7.1): the request is checked against
// the latest version (422 listing every failure) and recorded as a job
// PENDING_UPLOAD with a signed upload URL when it reads a file.
func (a *Area) startUpdate(w http.ResponseWriter, r *http.Request, c *call) {
	b, err := body(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	g, latest, err := a.latest(md)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	u, err := bmwire.DecodeUpdate(b, bmjob.ModelInfo(g, latest))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	changed, err := a.sweepOpenJobs(md)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if len(md.doc.OpenJobs) >= MaxOpenJobs {
		if changed {
			if err := a.saveModel(md); err != nil {
				a.fail(w, r, err)
				return
			}
		}
		a.fail(w, r, problem.New(http.StatusTooManyRequests, problem.BlockModelService, "Too Many Requests.",
			fmt.Sprintf("block model %s has %d update jobs waiting for their upload or queued, the most it takes (%d): confirm their uploads, or let them expire %v after their start",
				md.id(), len(md.doc.OpenJobs), MaxOpenJobs, PendingLifetime)))
		return
	}
	st := jobState{Org: c.org, WS: c.ws, User: c.user, Update: b, VersionUUID: bmstore.NewUUID(), NeedsFile: u.NeedsFile()}
	if st.NeedsFile {
		st.Upload = bmstore.NewUUID()
		if err := a.reserveBlob(st.ws(), st.Upload); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	j, err := a.bm.CreateJob(bmstore.Job{ModelID: md.id(), Kind: bmstore.JobUpdate, Status: bmstore.PendingUpload, Payload: jsonRaw(st)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	md.doc.OpenJobs = append(md.doc.OpenJobs, j.ID)
	md.remember(fullUser(c.user, c.org))
	if err := a.saveModel(md); err != nil {
		a.fail(w, r, err)
		return
	}
	out := UpdateWithURL{JobURL: a.jobURL(r, &md.doc.Record, j.ID), JobUUID: j.ID, VersionUUID: st.VersionUUID, Changes: u.Changes()}
	if st.NeedsFile {
		s := a.blobURL(r, "upload", c.org, c.ws, st.Upload)
		out.UploadURL = &s
	}
	writeJSON(w, http.StatusAccepted, out)
}

// uploaded serves POST …/jobs/{job_id}/uploaded (A.6.2): PENDING_UPLOAD →
// QUEUED (409 file-conflict in any other state), then the job runs on the
// worker's job layer.
func (a *Area) uploaded(w http.ResponseWriter, r *http.Request, c *call) {
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	j, st, err := a.jobOf(md, r.PathValue("job_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if j.Kind != bmstore.JobUpdate {
		a.fail(w, r, errNotFound("block model %s has no update job %s", md.id(), j.ID))
		return
	}
	if j.Status == bmstore.PendingUpload && a.now().Sub(j.CreatedAt) > PendingLifetime {
		a.expire(md, j, st)
	}
	// The upload's row bound is read once, here, and kept for the job.
	mem, fileRows := a.updateMemory(r.Context(), md, st)
	st.FileRows = fileRows
	if _, err := a.bm.TransitionJob(j.ID, bmstore.PendingUpload, bmstore.Queued, jsonRaw(st)); err != nil {
		if errors.Is(err, bmstore.ErrConflict) {
			a.fail(w, r, problem.New(http.StatusConflict, problem.BlockModelFileConflict, "File Conflict.",
				fmt.Sprintf("job %s is not waiting for an upload (it was confirmed already, or has finished)", j.ID)))
			return
		}
		a.fail(w, r, err)
		return
	}
	if err := a.submit(r.Context(), md, j, st, taskUpdate, mem); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"job_url": a.jobURL(r, &md.doc.Record, j.ID)})
}

// queryMemory is the memory estimate of a query job.
const queryMemory = 64 << 20

// submit hands a QUEUED job, of memory estimate mem, to the job layer;
// when that refuses it, the job fails with the reason and the error is
// returned.
func (a *Area) submit(ctx context.Context, md *model, j bmstore.Job, st jobState, task string, mem int64) error {
	spec := jobs.Spec{Org: st.Org, Topic: Topic, Task: task, User: st.User.ID, Workspace: st.WS, Memory: mem,
		Request: jsonRaw(queuedRequest{JobID: j.ID})}
	_, err := a.jobs.Submit(ctx, spec, a.runFunc(j.ID))
	if err == nil {
		return nil
	}
	// The job's record keeps p; the answer has status and title.
	p := problem.Problem{Type: problem.BlockModelService, Title: "Service Error.", Status: http.StatusServiceUnavailable,
		Detail: "the worker could not queue the job: " + err.Error()}
	status, title := http.StatusServiceUnavailable, "Service Unavailable."
	switch {
	case errors.Is(err, jobs.ErrBusy):
		status = http.StatusTooManyRequests
	case errors.Is(err, jobs.ErrTooLarge):
		p = *updateError(fmt.Sprintf("the update needs about %.0f MiB of memory, more than the %.0f MiB the worker gives a job",
			float64(mem)/(1<<20), float64(a.jobs.MaxMemory())/(1<<20)))
		status, title = p.Status, p.Title
	}
	st.Problem = &p
	if _, terr := a.bm.TransitionJob(j.ID, bmstore.Queued, bmstore.Failed, jsonRaw(st)); terr == nil {
		a.forgetUpload(j.ID, st)
		a.closeJob(md.id(), j.ID)
	}
	return &problem.Error{Status: status, Type: p.Type, Title: title, Detail: p.Detail, Err: err}
}

// updateMemory is the memory estimate of an update job
// (bmjob.UpdateMemory) from the latest version's rows; for a geometry
// change, from the upload's row bound too (a Parquet footer, or the lines
// of a CSV file), which it returns (0 otherwise). A request or file the
// job will refuse counts as an update of no file.
func (a *Area) updateMemory(ctx context.Context, md *model, st jobState) (mem, fileRows int64) {
	g, latest, err := a.latest(md)
	if err != nil {
		return bmjob.UpdateMemory(0, 0, 0, false), 0
	}
	info := bmjob.ModelInfo(g, latest)
	u, err := bmwire.DecodeUpdate(st.Update, info)
	if err != nil || u.GeometryChange == nil || !*u.GeometryChange || !u.NeedsFile() {
		return bmjob.UpdateMemory(latest.Rows, 0, 0, false), 0
	}
	if f, err := a.objects.OpenBlob(ctx, st.ws(), nil, st.Upload); err == nil {
		fileRows, _ = bmjob.FileRowBound(f, f.Size(), u.Input.Format)
		f.Close()
	}
	return bmjob.UpdateMemory(latest.Rows, fileRows, len(u.ValueColumns(info)), true), fileRows
}

// Rebuild makes the Func of a queued job of the area from its request
// (jobs.Options.Rebuild for Topic): the job record in the column store
// says what to do.
func (a *Area) Rebuild(rec jobs.Record, request []byte) (jobs.Func, error) {
	var q queuedRequest
	if err := json.Unmarshal(request, &q); err != nil || q.JobID == "" {
		return nil, fmt.Errorf("bmapi: the queued request of job %s cannot be read: %v", rec.ID, err)
	}
	return a.runFunc(q.JobID), nil
}

func (a *Area) runFunc(jobID string) jobs.Func {
	return func(ctx context.Context, progress func(int, string)) (any, error) {
		return nil, a.run(ctx, jobID, progress)
	}
}

// closeJob removes a job from its model's open jobs.
func (a *Area) closeJob(modelID, jobID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	md, err := a.loadModel(modelID)
	if err != nil {
		return
	}
	if i := slices.Index(md.doc.OpenJobs, jobID); i >= 0 {
		md.doc.OpenJobs = slices.Delete(md.doc.OpenJobs, i, i+1)
		if err := a.saveModel(md); err != nil {
			a.logger.Warn("recording a block model job's start", "bm_uuid", modelID, "job_id", jobID, "err", err)
		}
	}
}

// run processes a job: QUEUED → PROCESSING → COMPLETE or FAILED. A job
// found PROCESSING (its worker stopped while it ran) runs again: a version
// is committed atomically, so nothing was half written. Jobs of one model
// apply one at a time (the column store's change holds the model's lock).
func (a *Area) run(ctx context.Context, jobID string, progress func(int, string)) error {
	j, err := a.bm.GetJob(jobID)
	if err != nil {
		return fmt.Errorf("bmapi: job %s: %w", jobID, err)
	}
	switch j.Status {
	case bmstore.Queued:
		if j, err = a.bm.TransitionJob(jobID, bmstore.Queued, bmstore.Processing, j.Payload); err != nil {
			if errors.Is(err, bmstore.ErrConflict) {
				return nil // failed meanwhile (model deleted)
			}
			return fmt.Errorf("bmapi: job %s: %w", jobID, err)
		}
		a.closeJob(j.ModelID, jobID)
	case bmstore.Processing:
	default:
		return nil
	}
	var st jobState
	if err := json.Unmarshal(j.Payload, &st); err != nil {
		return fmt.Errorf("bmapi: job %s payload: %w", jobID, err)
	}
	md, err := a.loadModel(j.ModelID)
	if err != nil {
		return a.finish(j, st, fault(err), err)
	}
	if md.deleted() {
		p := problem.Problem{Type: problem.BlockModelJobModelDeleted, Title: "Block Model Deleted.", Status: http.StatusGone,
			Detail: fmt.Sprintf("block model %s was deleted before the job ran", md.id())}
		st.Problem = &p
		return a.finish(j, st, st.Problem, nil)
	}
	progress(0, "processing")
	switch j.Kind {
	case bmstore.JobUpdate:
		err = a.runUpdate(ctx, md, &st)
	case bmstore.JobQuery:
		err = a.runQuery(ctx, md, &st)
	default:
		err = fmt.Errorf("bmapi: job %s: kind %s does not run", jobID, j.Kind)
	}
	if err != nil && st.Problem == nil {
		st.Problem = fault(err)
	}
	return a.finish(j, st, st.Problem, err)
}

// fault is the FAILED payload of a failure of the engine.
func fault(err error) *problem.Problem {
	if problem.NoSpace(err) {
		return &problem.Problem{Type: problem.BlockModelService, Title: "Insufficient Storage.", Status: http.StatusInsufficientStorage,
			Detail: "the worker's disk is full; nothing was written"}
	}
	return &problem.Problem{Type: problem.BlockModelService, Title: "Service Error.", Status: http.StatusInternalServerError,
		Detail: "the job failed in the engine; nothing was written"}
}

// finish records the job's outcome: FAILED with p when p is set, else
// COMPLETE. It returns cause (the job layer's record of a fault).
func (a *Area) finish(j bmstore.Job, st jobState, p *problem.Problem, cause error) error {
	to := bmstore.Complete
	if p != nil {
		to, st.Problem = bmstore.Failed, p
	}
	if _, err := a.bm.TransitionJob(j.ID, bmstore.Processing, to, jsonRaw(st)); err != nil {
		return errors.Join(cause, fmt.Errorf("bmapi: job %s: recording its outcome: %w", j.ID, err))
	}
	// The upload is read by the job alone: once its outcome is recorded,
	// no run of it needs the file again.
	a.dropLater(j.ID, st)
	return cause
}

// runUpdate applies an update job to the model's latest version, then
// writes the linked object's version. Failures of the input set
// st.Problem and return nil; the latest version is then unchanged.
func (a *Area) runUpdate(ctx context.Context, md *model, st *jobState) error {
	g, latest, err := a.latest(md)
	if err != nil {
		return err
	}
	// A run again after its worker stopped: the version may be committed
	// already (it takes the reserved uuid), then the job only completes.
	if v, err := a.versionByUUID(md, st.VersionUUID); err == nil {
		md, err = a.recordVersion(ctx, md.id(), v, st.User)
		if err != nil {
			return err
		}
		st.Version = a.versionRecord(md, v, false)
		return nil
	}
	u, err := bmwire.DecodeUpdate(st.Update, bmjob.ModelInfo(g, latest))
	if err != nil {
		st.Problem = updateError(err.Error())
		return nil
	}
	in := bmjob.UpdateInput{ModelID: md.id(), Geometry: g, Update: u, ModelFillSubblocks: md.doc.Record.FillSubblocks,
		VersionUUID: st.VersionUUID, CreatedBy: st.User.ID, MaxMemory: a.jobs.MaxMemory(), FileRows: st.FileRows}
	ws := store.Workspace{Org: st.Org, ID: st.WS}
	if u.NeedsFile() {
		f, err := a.objects.OpenBlob(ctx, ws, nil, st.Upload)
		if problem.StatusOf(err) == http.StatusNotFound {
			st.Problem = &problem.Problem{Type: problem.BlockModelJobFileNotFound, Title: "File Not Found.", Status: http.StatusNotFound,
				Detail: "the update needs a file and none was uploaded to the job's upload_url"}
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		in.File, in.FileSize = f, f.Size()
	}
	v, err := bmjob.ApplyUpdate(ctx, a.bm, in)
	var fe *bmwire.FileError
	var ve *blockmodel.ValidationError
	switch {
	case err == nil:
	case errors.As(err, &fe):
		p := fe.Problem()
		st.Problem = &p
		var buf bytes.Buffer
		if werr := fe.WriteCSV(&buf); werr != nil {
			return werr
		}
		name := bmstore.NewUUID()
		if rerr := a.reserveBlob(ws, name); rerr != nil {
			return rerr
		}
		if perr := a.objects.PutBlob(ctx, ws, name, &buf); perr != nil {
			return perr
		}
		st.ErrorFile = name
		return nil
	case errors.As(err, &ve):
		st.Problem = updateError(ve.Error())
		return nil
	case errors.Is(err, bmjob.ErrNoFile):
		st.Problem = &problem.Problem{Type: problem.BlockModelJobFileNotFound, Title: "File Not Found.", Status: http.StatusNotFound,
			Detail: err.Error()}
		return nil
	default:
		return err
	}
	md, err = a.recordVersion(ctx, md.id(), v, st.User)
	if err != nil {
		return err
	}
	st.Version = a.versionRecord(md, v, false)
	return nil
}

func updateError(detail string) *problem.Problem {
	return &problem.Problem{Type: problem.BlockModelJobUpdateError, Title: "Update Error.", Status: http.StatusUnprocessableEntity, Detail: detail}
}

// QueryResult is the 200 answer of POST …/blocks (the client's
// QueryResult).
type QueryResult struct {
	BMUUID      string             `json:"bm_uuid"`
	VersionID   int64              `json:"version_id"`
	VersionUUID string             `json:"version_uuid"`
	BBox        bmwire.BBox        `json:"bbox"`
	Columns     []string           `json:"columns"`
	Mapping     blockmodel.Mapping `json:"mapping"`
	JobURL      string             `json:"job_url"`
}

// query serves POST …/blocks (A.8): the query is checked, a query job
// queued, and the answer describes the output the job writes.
func (a *Area) query(w http.ResponseWriter, r *http.Request, c *call) {
	b, err := body(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	g, v, err := a.latest(md)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	q, err := bmwire.DecodeQuery(b, bmjob.ModelInfo(g, v))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if q.VersionUUID != nil {
		if v, err = a.versionByUUID(md, q.VersionUUID.String()); err != nil {
			a.fail(w, r, errValidation("version_uuid", "block model %s has no version %s", md.id(), q.VersionUUID))
			return
		}
	}
	info := bmjob.ModelInfo(g, v)
	cols, err := q.ResolveColumns(info)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	st := jobState{Org: c.org, WS: c.ws, User: c.user, Query: b, QueryVersion: v.VersionID}
	j, err := a.bm.CreateJob(bmstore.Job{ModelID: md.id(), Kind: bmstore.JobQuery, Status: bmstore.Queued, Payload: jsonRaw(st)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.submit(r.Context(), md, j, st, taskQuery, queryMemory); err != nil {
		a.fail(w, r, err)
		return
	}
	box := q.BBox
	if box.IJK == nil && box.XYZ == nil {
		n := g.Parents()
		ijk := blockmodel.NewIJKBox([3]int64{}, [3]int64{int64(n[0] - 1), int64(n[1] - 1), int64(n[2] - 1)})
		box.IJK = &ijk
	}
	rec := a.versionRecord(md, v, false)
	writeJSON(w, http.StatusOK, QueryResult{BMUUID: md.id(), VersionID: int64(v.VersionID), VersionUUID: v.VersionUUID,
		BBox: box, Columns: cols, Mapping: rec.Mapping, JobURL: a.jobURL(r, &md.doc.Record, j.ID)})
}

// blobCreator is the embedded object store's direct writing of a blob
// (store.Embedded.CreateBlob).
type blobCreator interface {
	CreateBlob(ws store.Workspace, name string) (*store.BlobWriter, error)
}

// runQuery writes a query job's output as a blob of the workspace
// (downloaded through a signed URL). With the embedded store the output is
// written where it becomes the blob, which a rename then commits; with
// another store it is written to a temporary file, then stored. A failed
// query leaves no blob.
func (a *Area) runQuery(ctx context.Context, md *model, st *jobState) error {
	g, latest, err := a.latest(md)
	if err != nil {
		return err
	}
	q, err := bmwire.DecodeQuery(st.Query, bmjob.ModelInfo(g, latest))
	if err != nil {
		st.Problem = &problem.Problem{Type: problem.BlockModelValidation, Title: "Validation Error.", Status: http.StatusUnprocessableEntity, Detail: err.Error()}
		return nil
	}
	v, err := a.bm.Version(md.id(), st.QueryVersion)
	if err != nil {
		return err
	}
	ws := store.Workspace{Org: st.Org, ID: st.WS}
	name := bmstore.NewUUID()
	if err := a.reserveBlob(ws, name); err != nil {
		return err
	}
	write := func(w io.Writer) (bool, error) {
		_, err := bmjob.Query(ctx, a.bm, md.id(), g, v, q, w)
		var ve *blockmodel.ValidationError
		if errors.As(err, &ve) {
			st.Problem = &problem.Problem{Type: problem.BlockModelValidation, Title: "Validation Error.", Status: http.StatusUnprocessableEntity, Detail: ve.Error()}
			return false, nil
		}
		return err == nil, err
	}
	if bc, ok := a.objects.(blobCreator); ok {
		w, err := bc.CreateBlob(ws, name)
		if err != nil {
			return err
		}
		defer w.Abort()
		if ok, err := write(w); !ok {
			return err
		}
		if err := w.Commit(); err != nil {
			return err
		}
	} else {
		f, err := os.CreateTemp(a.tmp, "query-*")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if ok, err := write(f); !ok {
			return err
		}
		if _, err := f.Seek(0, 0); err != nil {
			return err
		}
		if err := a.objects.PutBlob(ctx, ws, name, f); err != nil {
			return err
		}
	}
	st.Download = name
	return nil
}
