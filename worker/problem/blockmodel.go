package problem

import "net/http"

// BlockModelBase is the base of the block model area's problem types (the
// seed's block-model-service suffixes).
const BlockModelBase = Base + "/block-model-service"

// ObjectBlockModelLinked is the 409 of a DELETE, through the object
// routes, of a block model's geoscience object (delete the model instead).
const ObjectBlockModelLinked = ObjectBase + "/objects/block-model-linked"

// Problem types of the block model area (worker/blockmodel/bmapi).
const (
	BlockModelUnauthorized = BlockModelBase + "/auth/unauthorized"
	BlockModelForbidden    = BlockModelBase + "/auth/forbidden"
	BlockModelNotFound     = BlockModelBase + "/not-found"
	BlockModelFileConflict = BlockModelBase + "/file-conflict"
	BlockModelNameConflict = BlockModelBase + "/name-conflict"
	BlockModelValidation   = BlockModelBase + "/validation"
	BlockModelInvalidQuery = BlockModelBase + "/invalid-query-parameters"
	BlockModelService      = BlockModelBase + "/service"
	BlockModelRestoreError = BlockModelBase + "/restore-error"
	BlockModelNotImpl      = BlockModelBase + "/not-implemented"
	// Types of a FAILED job's payload (not HTTP answers).
	BlockModelJobUpdateError  = BlockModelBase + "/job/update-error"
	BlockModelJobFileNotFound = BlockModelBase + "/job/file-not-found"
	BlockModelJobExpired      = BlockModelBase + "/job/expired"
	BlockModelJobModelDeleted = BlockModelBase + "/job/model-deleted"
)

// blockModelStatuses are the statuses of the block model area's routes
// (worker/blockmodel/bmapi, A.10 of the specification).
func blockModelStatuses() map[string][]Status {
	const (
		org = "/blockmodel/orgs/{org_id}"
		ws  = org + "/workspaces/{workspace_id}/block-models"
		bm  = ws + "/{bm_id}"
		rs  = bm + "/report-specifications"
	)
	var (
		auth    = Status{http.StatusUnauthorized, "missing or unknown bearer token", []string{BlockModelUnauthorized}}
		invalid = Status{http.StatusUnprocessableEntity, "invalid parameters: an id that is not a UUID, a bad query parameter or body member (invalid-params names each)", []string{BlockModelValidation}}
		noWS    = Status{http.StatusNotFound, "the workspace does not exist for the caller (no role in it)", []string{WorkspaceNotFound}}
		noBM    = Status{http.StatusNotFound, "the workspace does not exist for the caller (no role in it), or no such block model (a deleted one without deleted=true), job or version", []string{WorkspaceNotFound, BlockModelNotFound}}
		low     = Status{http.StatusForbidden, "a viewer on an editor route (your_role, permitted_roles)", []string{BlockModelForbidden}}
		large   = Status{http.StatusRequestEntityTooLarge, "the body is over 1 MiB", []string{PayloadTooLarge}}
		name    = Status{http.StatusConflict, "another live block model of the workspace has the name (case-insensitively), or the linked object's path is taken", []string{BlockModelNameConflict}}
		full    = Status{http.StatusInsufficientStorage, "the worker's disk is full; nothing is kept", []string{BlockModelService}}
		queue   = []Status{
			{http.StatusTooManyRequests, "the caller has too many jobs queued or running", []string{BlockModelService}},
			{http.StatusServiceUnavailable, "the worker cannot queue the job (shutting down)", []string{BlockModelService}},
		}
		ok = func(meaning string) Status { return Status{http.StatusOK, meaning, nil} }
	)
	with := func(list []Status, more ...Status) []Status { return append(append([]Status(nil), list...), more...) }
	// swap replaces the status of st's code in list.
	swap := func(list []Status, st Status) []Status {
		out := append([]Status(nil), list...)
		for i := range out {
			if out[i].Code == st.Code {
				out[i] = st
			}
		}
		return out
	}
	view := []Status{auth, noBM, statusGone, invalid}
	edit := with(view, low)
	notImpl := []Status{auth, invalid, {http.StatusNotImplemented, "block model reports are not implemented", []string{BlockModelNotImpl}}}
	out := map[string][]Status{
		"POST " + ws:                   {auth, {http.StatusCreated, "the block model record with job_url; version 1 and the linked object are written", nil}, low, noWS, name, statusGone, invalid, large, full},
		"GET " + ws:                    {auth, ok("a page {count, limit, offset, total, results}"), noWS, statusGone, invalid},
		"GET " + org + "/block-models": {auth, ok("a page of the models of the organisation's workspaces where the caller has a role"), invalid},
		"GET " + bm:                    with(view, ok("the block model record")),
		"PATCH " + bm:                  with(edit, ok("the block model record"), name, large, full),
		"DELETE " + bm:                 with(edit, Status{http.StatusNoContent, "deleted (soft); its pending and queued jobs fail, its object is deleted", nil}),
		"POST " + bm: with(edit, Status{http.StatusAccepted, "restored (renamed <name> (n) on a clash), or not deleted: the record", nil},
			Status{http.StatusBadRequest, "deleted=false is missing or not false", []string{BlockModelInvalidQuery}},
			Status{http.StatusInternalServerError, "no free name for the restored model", []string{BlockModelRestoreError}}, full),
		"PATCH " + bm + "/blocks": with(edit, Status{http.StatusAccepted, "UpdateWithUrl: the job, its upload_url (when the update reads a file) and the reserved version_uuid", nil}, large, full,
			Status{http.StatusTooManyRequests, "the model has 256 update jobs waiting for their upload or queued (bmapi.MaxOpenJobs)", []string{BlockModelService}}),
		"POST " + bm + "/jobs/{job_id}/uploaded": with(swap(edit, Status{http.StatusUnprocessableEntity, "invalid parameters (invalid-params names each), or an update needing more memory than the worker gives a job (a geometry change of many rows): the job fails",
			[]string{BlockModelValidation, BlockModelJobUpdateError}}), Status{http.StatusCreated, "{job_url}: the job is queued", nil},
			Status{http.StatusConflict, "the job is not waiting for an upload (confirmed already, or finished)", []string{BlockModelFileConflict}}, queue[0], queue[1]),
		"GET " + bm + "/jobs/{job_id}":                with(view, ok("{job_status, payload}")),
		"POST " + bm + "/blocks":                      with(view, ok("QueryResult: the resolved query and the job_url of its output"), large, queue[0], queue[1]),
		"GET " + bm + "/versions":                     with(view, ok("a page of versions, newest first, with referenced_units")),
		"GET " + bm + "/versions/{version_id}":        with(view, ok("the version (with changes when include_changes=true)")),
		"POST " + bm + "/versions/{version_id}/delta": with(view, ok("the versions that changed the columns in the box"), Status{http.StatusNotModified, "nothing changed", nil}, large),
		"GET " + org + "/units":                       {auth, ok("the units table"), invalid},
	}
	for _, p := range []string{"POST " + rs, "GET " + rs, "GET " + rs + "/{report_specification_id}", "PATCH " + rs + "/{report_specification_id}",
		"DELETE " + rs + "/{report_specification_id}", "POST " + rs + "/{report_specification_id}/results",
		"GET " + rs + "/{report_specification_id}/results", "GET " + rs + "/{report_specification_id}/results/{report_result_id}"} {
		out[p] = notImpl
	}
	return out
}
