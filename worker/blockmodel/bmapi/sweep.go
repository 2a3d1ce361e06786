package bmapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// OutputLifetime is how long the files of a finished job are kept after its
// end: a query's output and an update's error file. Past it the job's
// download_url is null and Sweep deletes them.
const OutputLifetime = 24 * time.Hour

// SweepInterval is the pause between two sweeps of RunSweeps.
const SweepInterval = 10 * time.Minute

// privateBlobs is the embedded object store's private blobs
// (store.Embedded.ReserveBlob): the area's upload files, query outputs and
// error files, which no object may reference, so that the area can delete
// them once its jobs are done with them. With another store they are
// neither reserved nor deleted.
type privateBlobs interface {
	ReserveBlob(ws store.Workspace, name string) error
	DeletePrivateBlob(ws store.Workspace, name string) error
}

// ws is the workspace of the job's files.
func (st jobState) ws() store.Workspace { return store.Workspace{Org: st.Org, ID: st.WS} }

// reserveBlob makes name a private blob of ws before it is handed out or
// written.
func (a *Area) reserveBlob(ws store.Workspace, name string) error {
	if pb, ok := a.objects.(privateBlobs); ok {
		return pb.ReserveBlob(ws, name)
	}
	return nil
}

// dropBlob deletes a private blob of ws (nothing for an empty name) and
// reports whether the job may forget it: a failure is logged, and Sweep
// tries again; a blob that is not private (written before the area
// reserved its files) is kept for good.
func (a *Area) dropBlob(ws store.Workspace, name string) bool {
	pb, ok := a.objects.(privateBlobs)
	if name == "" || !ok {
		return true
	}
	err := pb.DeletePrivateBlob(ws, name)
	switch {
	case err == nil:
		return true
	case problem.StatusOf(err) == http.StatusConflict:
		a.logger.Info("a block model job's file is not private: kept", "blob", name)
		return true
	default:
		a.logger.Warn("deleting a block model job's file", "blob", name, "err", err)
		return false
	}
}

// droppedUpload is the upload of an ended job, to delete.
type droppedUpload struct {
	job  string
	ws   store.Workspace
	name string
}

// uploadOf is the upload of job jobID, if it has one.
func uploadOf(jobID string, st jobState) (droppedUpload, bool) {
	return droppedUpload{job: jobID, ws: st.ws(), name: st.Upload}, st.Upload != ""
}

// forgetUpload deletes the upload of a job that has just ended, and takes
// it out of the job's record.
func (a *Area) forgetUpload(jobID string, st jobState) {
	if d, ok := uploadOf(jobID, st); ok {
		a.forget(d)
	}
}

// dropLater hands the upload of an ended job to RunSweeps, which deletes
// it at once; a job's end does not wait for the unlink of its file.
func (a *Area) dropLater(jobID string, st jobState) {
	if d, ok := uploadOf(jobID, st); ok {
		select {
		case a.drops <- d:
		default: // the next Sweep deletes it
		}
	}
}

// forget deletes an ended job's upload and takes it out of the job's
// record.
func (a *Area) forget(d droppedUpload) {
	if !a.dropBlob(d.ws, d.name) {
		return
	}
	j, err := a.bm.GetJob(d.job)
	if err != nil || (j.Status != bmstore.Complete && j.Status != bmstore.Failed) {
		return
	}
	var st jobState
	if json.Unmarshal(j.Payload, &st) != nil || st.Upload != d.name {
		return
	}
	st.Upload = ""
	if _, err := a.bm.SetJobPayload(j.ID, j.Status, jsonRaw(st)); err != nil {
		a.logger.Warn("recording a block model job's deleted upload", "job_id", j.ID, "err", err)
	}
}

// outputsExpired reports whether a finished job's files are past
// OutputLifetime.
func (a *Area) outputsExpired(j bmstore.Job) bool {
	return (j.Status == bmstore.Complete || j.Status == bmstore.Failed) && a.now().Sub(j.UpdatedAt) > OutputLifetime
}

// Sweep goes through every job of the area: it expires those waiting for
// their upload past PendingLifetime (their models may never be touched
// again), and deletes the upload of every finished job and the output and
// error files of those finished more than OutputLifetime ago. It returns
// how many jobs it changed.
func (a *Area) Sweep(ctx context.Context) (int, error) {
	ids, err := a.bm.ListJobs()
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return changed, err
		}
		j, err := a.bm.GetJob(id)
		if err != nil {
			continue // deleted meanwhile, or unreadable: its reader reports it
		}
		var st jobState
		if len(j.Payload) > 0 && json.Unmarshal(j.Payload, &st) != nil {
			continue
		}
		switch {
		case j.Status == bmstore.PendingUpload && a.now().Sub(j.CreatedAt) > PendingLifetime:
			if a.expireJob(j, st) {
				a.closeJob(j.ModelID, j.ID)
				changed++
			}
		case j.Status == bmstore.Complete || j.Status == bmstore.Failed:
			kept := st
			if st.Upload != "" && a.dropBlob(st.ws(), st.Upload) {
				kept.Upload = ""
			}
			if a.outputsExpired(j) {
				if st.Download != "" && a.dropBlob(st.ws(), st.Download) {
					kept.Download = ""
				}
				if st.ErrorFile != "" && a.dropBlob(st.ws(), st.ErrorFile) {
					kept.ErrorFile = ""
				}
			}
			if kept.Upload != st.Upload || kept.Download != st.Download || kept.ErrorFile != st.ErrorFile {
				if _, err := a.bm.SetJobPayload(j.ID, j.Status, jsonRaw(kept)); err == nil {
					changed++
				}
			}
		}
	}
	return changed, nil
}

// RunSweeps sweeps (Sweep) at once, then every interval (SweepInterval when
// not positive), and deletes the uploads of jobs as they end, until ctx
// ends. One RunSweeps runs per area.
func (a *Area) RunSweeps(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = SweepInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	// A panic of a pass is logged (with its stack) and the loop goes on:
	// never a crash of the worker.
	for {
		var n int
		if err := geostat.Catch(func() (err error) { n, err = a.Sweep(ctx); return err }); err != nil && ctx.Err() == nil {
			a.logger.Warn("sweeping the block model jobs", "err", panicDetail(err))
		} else if n > 0 {
			a.logger.Info("swept the block model jobs", "changed", n)
		}
		for next := false; !next; {
			select {
			case <-ctx.Done():
				return
			case d := <-a.drops:
				if err := geostat.Catch(func() error { a.forget(d); return nil }); err != nil {
					a.logger.Warn("deleting a block model job's upload", "job_id", d.job, "err", panicDetail(err))
				}
			case <-t.C:
				next = true
			}
		}
	}
}

// panicDetail is err, with the stack when it is a panic.
func panicDetail(err error) string {
	var pe *geostat.PanicError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%v\n%s", pe.Value, pe.Stack)
	}
	return err.Error()
}
