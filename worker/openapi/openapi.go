// Package openapi describes the worker's HTTP API as an OpenAPI 3.1
// document built from the route patterns the worker registers, so that the
// document lists exactly the routes that are served: Document fails for a
// registered route without a description here.
package openapi

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Route describes one route pattern ("METHOD /path/{param}").
type Route struct {
	Summary string
	Tag     string
	// Public routes need no bearer token (health, signed URLs).
	Public bool
	// Body names the request body's media type ("" = none).
	Body string
	// Responses maps status codes to descriptions.
	Responses map[string]string
}

const (
	objPrefix  = "/geoscience-object/orgs/{org_id}/workspaces/{workspace_id}"
	filePrefix = "/file/v2/orgs/{org_id}/workspaces/{workspace_id}"
)

var jobResponses = map[string]string{"200": "the job has finished", "202": "the job is still running", "404": "no such job"}

// Routes describes every route of the worker, by pattern.
var Routes = map[string]Route{
	"GET /healthz":      {Summary: "Liveness: 200 {\"status\": \"ok\"}", Tag: "operations", Public: true, Responses: map[string]string{"200": "the worker is up"}},
	"GET /metrics":      {Summary: "Prometheus metrics: jobs by task and status, job durations, HTTP requests by route and code", Tag: "operations", Responses: map[string]string{"200": "text exposition format"}},
	"GET /openapi.json": {Summary: "This document", Tag: "operations", Responses: map[string]string{"200": "OpenAPI 3.1 JSON"}},
	"GET /geoscience-object/orgs/{org_id}/objects":                         {Summary: "List the organisation's objects (limit, offset, deleted, order_by, filters with eq, neq, in, nin, like, ilike, lt, lte, gt, gte)", Tag: "objects", Responses: map[string]string{"200": "a list page", "422": "invalid filter or sort"}},
	"GET " + objPrefix + "/objects":                                        {Summary: "List the workspace's objects (deleted=true for soft-deleted ones)", Tag: "objects", Responses: map[string]string{"200": "a list page"}},
	"PATCH " + objPrefix + "/objects":                                      {Summary: "Latest version ids of up to 500 objects", Tag: "objects", Body: "application/json", Responses: map[string]string{"200": "[{object_id, version_id}]"}},
	"GET " + objPrefix + "/objects/{object_id}":                            {Summary: "Get an object by id (version, include_versions, deleted; If-None-Match)", Tag: "objects", Responses: map[string]string{"200": "the version record", "304": "not modified", "404": "object not found"}},
	"POST " + objPrefix + "/objects/{object_id}":                           {Summary: "New version of an object by id (If-Match); ?deleted=false restores", Tag: "objects", Body: "application/json", Responses: map[string]string{"201": "the new version record", "412": "stale If-Match"}},
	"DELETE " + objPrefix + "/objects/{object_id}":                         {Summary: "Soft-delete an object", Tag: "objects", Responses: map[string]string{"204": "deleted"}},
	"GET " + objPrefix + "/objects/path/{path...}":                         {Summary: "Get an object by path", Tag: "objects", Responses: map[string]string{"200": "the version record", "404": "object not found"}},
	"POST " + objPrefix + "/objects/path/{path...}":                        {Summary: "Create an object, or a new version, by path", Tag: "objects", Body: "application/json", Responses: map[string]string{"201": "the version record", "400": "invalid object or path", "409": "already exists"}},
	"DELETE " + objPrefix + "/objects/path/{path...}":                      {Summary: "Soft-delete an object by path", Tag: "objects", Responses: map[string]string{"204": "deleted"}},
	"PUT " + objPrefix + "/data":                                           {Summary: "Upload URLs for up to 32 blobs named by SHA-256", Tag: "objects", Body: "application/json", Responses: map[string]string{"200": "[{id, name, exists, upload_url}]", "422": "too many names"}},
	"PUT /blobs/{org_id}/{workspace_id}/{name}":                            {Summary: "Signed blob upload: whole body, or comp=block / comp=blocklist", Tag: "objects", Public: true, Body: "application/octet-stream", Responses: map[string]string{"201": "stored", "400": "digest mismatch", "403": "bad or expired signature"}},
	"GET /blobs/{org_id}/{workspace_id}/{name}":                            {Summary: "Signed blob download (Range honoured)", Tag: "objects", Public: true, Responses: map[string]string{"200": "the Parquet bytes", "206": "a range"}},
	"POST /compute/orgs/{org_id}/geostat/{task}":                           {Summary: "Run a task in the seed's shape (knn, conditional-tbsim, simulation-report, break-ties): 200 with {message, object_modified}, or 303 to the job status after -sync-wait or with Prefer: respond-async", Tag: "compute", Body: "application/json", Responses: map[string]string{"200": "the task result", "303": "see the job status", "400": "bad JSON", "404": "unknown task", "413": "body over 1 MiB", "422": "invalid parameters (invalid-params)"}},
	"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}/status":            {Summary: "Job status {status, progress, message, error, links}", Tag: "compute", Responses: jobResponses},
	"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}":                   {Summary: "Job results {status, results, error}", Tag: "compute", Responses: jobResponses},
	"DELETE /compute/orgs/{org_id}/geostat/{task}/{job_id}":                {Summary: "Cancel a job", Tag: "compute", Responses: map[string]string{"204": "cancelling"}},
	"POST /compute/orgs/{org_id}/geostatistics/{task}":                     {Summary: "Run a task in the current client's shape (knn, conditional-turning-bands, simulation-report, break-ties, kriging): 303 to the job status", Tag: "compute", Body: "application/json", Responses: map[string]string{"303": "see the job status", "400": "bad JSON", "404": "unknown task", "413": "body over 1 MiB", "422": "invalid parameters (invalid-params)"}},
	"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}/status":      {Summary: "Job status {status, progress, message, error, links}", Tag: "compute", Responses: jobResponses},
	"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":             {Summary: "Job results {status, results, error}", Tag: "compute", Responses: jobResponses},
	"DELETE /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":          {Summary: "Cancel a job", Tag: "compute", Responses: map[string]string{"204": "cancelling"}},
	"GET /compute/orgs/{org_id}/reports/{workspace_id}/{file_id}":          {Summary: "Dashboard: the latest version of a simulation report as a page", Tag: "compute", Responses: map[string]string{"200": "text/html", "404": "no such report"}},
	"PUT " + filePrefix + "/files/path/{file_path...}":                     {Summary: "New file or new version by path: {file_id, version_id, upload_url}", Tag: "files", Responses: map[string]string{"200": "upload response", "400": "invalid path"}},
	"PUT " + filePrefix + "/files/{file_id}":                               {Summary: "New version of a file by id", Tag: "files", Responses: map[string]string{"200": "upload response"}},
	"GET " + filePrefix + "/files/path/{file_path...}":                     {Summary: "A file's record with a signed download URL", Tag: "files", Responses: map[string]string{"200": "the record", "404": "not found"}},
	"GET " + filePrefix + "/files/{file_id}":                               {Summary: "A file's record by id", Tag: "files", Responses: map[string]string{"200": "the record", "404": "not found"}},
	"DELETE " + filePrefix + "/files/path/{file_path...}":                  {Summary: "Soft-delete a file by path", Tag: "files", Responses: map[string]string{"204": "deleted"}},
	"DELETE " + filePrefix + "/files/{file_id}":                            {Summary: "Soft-delete a file", Tag: "files", Responses: map[string]string{"204": "deleted"}},
	"GET " + filePrefix + "/files":                                         {Summary: "List files {files, total, limit, offset}", Tag: "files", Responses: map[string]string{"200": "a page"}},
	"PUT /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}":  {Summary: "Signed upload of a file version's content", Tag: "files", Public: true, Responses: map[string]string{"201": "stored"}},
	"GET /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}":  {Summary: "Signed download of a file version (Range honoured; HEAD too)", Tag: "files", Public: true, Responses: map[string]string{"200": "the content", "206": "a range"}},
	"HEAD /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}": {Summary: "Size and type of a file version (signed)", Tag: "files", Public: true, Responses: map[string]string{"200": "headers only"}},
}

var paramRE = regexp.MustCompile(`\{([a-zA-Z_]+)(\.\.\.)?\}`)

// Document builds the OpenAPI document of the given route patterns. It
// fails when a pattern has no entry in Routes.
func Document(patterns []string, version string) (map[string]any, error) {
	paths := map[string]map[string]any{}
	sort.Strings(patterns)
	var missing []string
	for _, p := range patterns {
		rt, ok := Routes[p]
		if !ok {
			missing = append(missing, p)
			continue
		}
		method, path, found := strings.Cut(p, " ")
		if !found {
			return nil, fmt.Errorf("openapi: pattern %q has no method", p)
		}
		oaPath := paramRE.ReplaceAllString(path, "{$1}")
		var params []any
		for _, m := range paramRE.FindAllStringSubmatch(path, -1) {
			desc := "path parameter"
			if m[2] != "" {
				desc = "the rest of the path, slashes included"
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "description": desc, "schema": map[string]any{"type": "string"}})
		}
		responses := map[string]any{}
		for code, d := range rt.Responses {
			responses[code] = map[string]any{"description": d}
		}
		if !rt.Public {
			responses["401"] = map[string]any{"description": "missing or unknown bearer token"}
		}
		op := map[string]any{
			"summary":     rt.Summary,
			"operationId": operationID(method, path),
			"tags":        []string{rt.Tag},
			"responses":   responses,
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.Public {
			op["security"] = []any{}
		}
		if rt.Body != "" {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.Body: map[string]any{}}}
		}
		if paths[oaPath] == nil {
			paths[oaPath] = map[string]any{}
		}
		paths[oaPath][strings.ToLower(method)] = op
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("openapi: routes without a description: %s", strings.Join(missing, ", "))
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "geostat worker",
			"version":     version,
			"description": "Geostatistics compute tasks (knn, kriging, conditional turning bands, simulation report, break ties) over a geoscience object store, with jobs, a file area and operations endpoints. Errors are application/problem+json.",
		},
		"paths":      paths,
		"security":   []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}},
	}, nil
}

func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(path, "/") {
		seg = strings.Trim(seg, "{}.")
		if seg == "" {
			continue
		}
		b.WriteString("_")
		b.WriteString(strings.ReplaceAll(seg, "-", "_"))
	}
	return b.String()
}
