// Package openapi describes the worker's HTTP API as an OpenAPI 3.1
// document built from the route patterns the worker registers, so that the
// document lists exactly the routes that are served: Document fails for a
// registered route without a description here. The responses of each route
// are the statuses of problem.RouteStatuses, the table the handlers are
// tested against.
//
// The compute routes are described from the task package's own tables:
// each task gets its own submit path whose request body is the JSON Schema
// that tasks.RequestSchema renders from the rules the decoder enforces, the
// {task} of the job routes enumerates the topic's tasks, and errors are
// problem documents (RFC 9457), with invalid-params on a 422.
package openapi

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/tasks"
)

// route describes one route pattern ("METHOD /path/{param}").
type route struct {
	summary string
	tag     string
	// public routes need no bearer token (health, signed URLs).
	public bool
	// body names the request body's media type ("" = none).
	body string
	// topic is the compute topic of the route; its {task} enumerates the
	// topic's tasks.
	topic string
	// perTask routes get one path per task of the topic, each with the
	// task's request schema as body.
	perTask bool
	// json maps status codes to the schema (a name under
	// components/schemas) of their application/json body.
	json map[string]string
	// bodySchema names the request body's schema under
	// components/schemas ("" = none given).
	bodySchema string
}

const (
	objPrefix  = "/geoscience-object/orgs/{org_id}/workspaces/{workspace_id}"
	filePrefix = "/file/v2/orgs/{org_id}/workspaces/{workspace_id}"
)

// routes describes every route of the worker, by pattern.
func routes() map[string]route {
	out := map[string]route{
		"GET /healthz":      {summary: "Liveness: 200 {\"status\": \"ok\"}", tag: "operations", public: true},
		"GET /metrics":      {summary: "Prometheus metrics: jobs by task and status, job durations, HTTP requests by route and code", tag: "operations"},
		"GET /openapi.json": {summary: "This document", tag: "operations"},
		"GET /geoscience-object/orgs/{org_id}/objects":                         {summary: "List the organisation's objects (limit, offset, deleted, order_by, filters with eq, neq, in, nin, like, ilike, lt, lte, gt, gte)", tag: "objects"},
		"GET " + objPrefix + "/objects":                                        {summary: "List the workspace's objects (deleted=true for soft-deleted ones)", tag: "objects"},
		"PATCH " + objPrefix + "/objects":                                      {summary: "Latest version ids of up to 500 objects", tag: "objects", body: "application/json"},
		"GET " + objPrefix + "/objects/{object_id}":                            {summary: "Get an object by id (version, include_versions, deleted; If-None-Match)", tag: "objects"},
		"POST " + objPrefix + "/objects/{object_id}":                           {summary: "New version of an object by id (If-Match); ?deleted=false restores", tag: "objects", body: "application/json"},
		"DELETE " + objPrefix + "/objects/{object_id}":                         {summary: "Soft-delete an object", tag: "objects"},
		"GET " + objPrefix + "/objects/path/{path...}":                         {summary: "Get an object by path", tag: "objects"},
		"POST " + objPrefix + "/objects/path/{path...}":                        {summary: "Create an object, or a new version, by path", tag: "objects", body: "application/json"},
		"DELETE " + objPrefix + "/objects/path/{path...}":                      {summary: "Soft-delete an object by path", tag: "objects"},
		"PUT " + objPrefix + "/data":                                           {summary: "Upload URLs for up to 32 blobs named by SHA-256", tag: "objects", body: "application/json"},
		"PUT /blobs/{org_id}/{workspace_id}/{name}":                            {summary: "Signed blob upload: whole body, or comp=block / comp=blocklist", tag: "objects", public: true, body: "application/octet-stream"},
		"GET /blobs/{org_id}/{workspace_id}/{name}":                            {summary: "Signed blob download (Range honoured)", tag: "objects", public: true},
		"POST /compute/orgs/{org_id}/geostat/{task}":                           {summary: "Run a task in the seed's shape: 200 with the task result, or 303 to the job status after -sync-wait or with Prefer: respond-async", tag: "compute", body: "application/json", topic: tasks.TopicSeed, perTask: true, json: map[string]string{"200": "TaskResult"}},
		"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}/status":            {summary: "Job status", tag: "compute", topic: tasks.TopicSeed, json: map[string]string{"200": "JobStatus", "202": "JobStatus"}},
		"GET /compute/orgs/{org_id}/geostat/{task}/{job_id}":                   {summary: "Job results", tag: "compute", topic: tasks.TopicSeed, json: map[string]string{"200": "JobResults", "202": "JobResults"}},
		"DELETE /compute/orgs/{org_id}/geostat/{task}/{job_id}":                {summary: "Cancel a job", tag: "compute", topic: tasks.TopicSeed},
		"POST /compute/orgs/{org_id}/geostatistics/{task}":                     {summary: "Run a task in the current client's shape: 303 to the job status", tag: "compute", body: "application/json", topic: tasks.TopicCurrent, perTask: true},
		"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}/status":      {summary: "Job status", tag: "compute", topic: tasks.TopicCurrent, json: map[string]string{"200": "JobStatus", "202": "JobStatus"}},
		"GET /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":             {summary: "Job results", tag: "compute", topic: tasks.TopicCurrent, json: map[string]string{"200": "JobResults", "202": "JobResults"}},
		"DELETE /compute/orgs/{org_id}/geostatistics/{task}/{job_id}":          {summary: "Cancel a job", tag: "compute", topic: tasks.TopicCurrent},
		"GET /compute/orgs/{org_id}/reports/{workspace_id}/{file_id}":          {summary: "Dashboard: the latest version of a simulation report as a page", tag: "compute"},
		"PUT " + filePrefix + "/files/path/{file_path...}":                     {summary: "New file or new version by path: {file_id, version_id, upload_url}", tag: "files"},
		"PUT " + filePrefix + "/files/{file_id}":                               {summary: "New version of a file by id", tag: "files"},
		"GET " + filePrefix + "/files/path/{file_path...}":                     {summary: "A file's record with a signed download URL", tag: "files"},
		"GET " + filePrefix + "/files/{file_id}":                               {summary: "A file's record by id", tag: "files"},
		"DELETE " + filePrefix + "/files/path/{file_path...}":                  {summary: "Soft-delete a file by path", tag: "files"},
		"DELETE " + filePrefix + "/files/{file_id}":                            {summary: "Soft-delete a file", tag: "files"},
		"GET " + filePrefix + "/files":                                         {summary: "List files {files, total, limit, offset}", tag: "files"},
		"PUT /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}":  {summary: "Signed upload of a file version's content", tag: "files", public: true},
		"GET /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}":  {summary: "Signed download of a file version (Range honoured; HEAD too)", tag: "files", public: true},
		"HEAD /file/v2/content/{org_id}/{workspace_id}/{file_id}/{version_id}": {summary: "Size and type of a file version (signed)", tag: "files", public: true},
	}
	const (
		wsOrg   = "/workspace/orgs/{org_id}"
		wsAdmin = "/workspace/admin/orgs/{org_id}"
		ws      = wsOrg + "/workspaces/{workspace_id}"
		aws     = wsAdmin + "/workspaces/{workspace_id}"
		js      = "application/json"
	)
	for pattern, rt := range map[string]route{
		"GET /workspace/platform/identity/v1/token":                {summary: "Token check: 200 without a body for a valid bearer token (tokens are issued by the admin token routes)"},
		"GET /workspace/evo/identity/v1/token":                     {summary: "Token check (the client's path)"},
		"GET " + ws:                                                {summary: "A workspace with the caller's role (deleted=true reads a deleted one)"},
		"POST " + ws:                                               {summary: "Restore a deleted workspace (?deleted=false); owner or instance admin"},
		"GET " + ws + "/users":                                     {summary: "The workspace's users and roles (user_id or filter[user_id] keeps one)"},
		"GET " + wsOrg + "/members/users":                          {summary: "The organisation's instance users (limit, offset)"},
		"DELETE " + wsOrg + "/members/invitations/{invitation_id}": {summary: "Delete an invitation; instance admin"},
		"POST " + wsOrg + "/workspaces":                            {summary: "Create a workspace; the creator becomes its owner", body: js},
		"GET " + wsOrg + "/workspaces":                             {summary: "The workspaces where the caller has a role (limit, offset, order_by, deleted, name, filter[name], created_by, user_id)"},
		"GET " + wsOrg + "/workspaces/summary":                     {summary: "The caller's workspaces as {id, name}"},
		"PATCH " + ws:                                              {summary: "Update a workspace; owner", body: js},
		"DELETE " + ws:                                             {summary: "Soft-delete a workspace (every area then answers 410); owner"},
		"GET " + ws + "/current-user-role":                         {summary: "The caller's role in the workspace"},
		"POST " + ws + "/users":                                    {summary: "Give a user (user_id or email) a role in the workspace; owner", body: js},
		"DELETE " + ws + "/users/{user_id}":                        {summary: "Remove a user's role; owner, or the user itself"},
		"POST " + wsOrg + "/members/users":                         {summary: "Add users by email (unknown emails are invited); instance admin", body: js},
		"PATCH " + wsOrg + "/members/users/{user_id}":              {summary: "Set a user's instance role; instance admin", body: js},
		"DELETE " + wsOrg + "/members/users/{user_id}":             {summary: "Remove a user from the organisation (its grants, and with its last organisation its tokens); instance admin"},
		"GET " + wsOrg + "/members/roles":                          {summary: "The instance roles admin and member"},
		"GET " + wsOrg + "/members/invitations":                    {summary: "The organisation's invitations; instance admin"},
		"GET " + wsAdmin + "/workspaces":                           {summary: "Every workspace of the organisation; instance admin"},
		"GET " + aws:                                               {summary: "A workspace, whatever the caller's role in it; instance admin"},
		"GET " + aws + "/users":                                    {summary: "A workspace's users; instance admin"},
		"POST " + aws + "/users":                                   {summary: "Give a user a role in a workspace; instance admin", body: js},
		"DELETE " + aws + "/users/{user_id}":                       {summary: "Remove a user's role in a workspace; instance admin"},
		"GET " + wsAdmin + "/users/{user_id}/workspaces":           {summary: "A user's workspaces with user_role; instance admin"},
		"POST " + wsAdmin + "/action/bulk_assign_roles":            {summary: "Up to 100 role assignments {user_id, workspace_id, role}; instance admin", body: js},
		"POST " + wsAdmin + "/users":                               {summary: "Create an instance user {email, full_name, roles?}; instance admin", body: js},
		"POST " + wsAdmin + "/users/{user_id}/tokens":              {summary: "Issue an API token {name, expires_at?}: the token is in this answer only; instance admin", body: js},
		"GET " + wsAdmin + "/users/{user_id}/tokens":               {summary: "A user's tokens (never their secrets); instance admin"},
		"DELETE " + wsAdmin + "/users/{user_id}/tokens/{token_id}": {summary: "Revoke a token (refused at the next request); instance admin"},
	} {
		rt.tag = "workspaces"
		out[pattern] = rt
	}
	for pattern, rt := range blockModelRoutes() {
		out[pattern] = rt
	}
	return out
}

var paramRE = regexp.MustCompile(`\{([a-zA-Z_]+)(\.\.\.)?\}`)

// Document builds the OpenAPI document of the given route patterns. It
// fails when a pattern has no description here.
func Document(patterns []string, version string) (map[string]any, error) {
	all := routes()
	statusTable := problem.RouteStatuses()
	paths := map[string]map[string]any{}
	patterns = append([]string(nil), patterns...)
	sort.Strings(patterns)
	var missing []string
	for _, p := range patterns {
		rt, ok := all[p]
		if !ok {
			missing = append(missing, p)
			continue
		}
		statuses := statusTable[p]
		if len(statuses) == 0 {
			return nil, fmt.Errorf("openapi: route %q has no statuses in problem.RouteStatuses", p)
		}
		method, path, found := strings.Cut(p, " ")
		if !found {
			return nil, fmt.Errorf("openapi: pattern %q has no method", p)
		}
		ops := map[string]map[string]any{paramRE.ReplaceAllString(path, "{$1}"): operation(method, path, rt, "", statuses)}
		if rt.perTask {
			ops = map[string]map[string]any{}
			names := tasks.Tasks(rt.topic)
			if len(names) == 0 {
				return nil, fmt.Errorf("openapi: topic %q of %q has no tasks", rt.topic, p)
			}
			for _, task := range names {
				if _, ok := tasks.RequestSchema(rt.topic, task); !ok {
					return nil, fmt.Errorf("openapi: task %s/%s has no request schema", rt.topic, task)
				}
				concrete := strings.Replace(path, "{task}", task, 1)
				ops[paramRE.ReplaceAllString(concrete, "{$1}")] = operation(method, concrete, rt, task, statuses)
			}
		}
		for oaPath, op := range ops {
			if paths[oaPath] == nil {
				paths[oaPath] = map[string]any{}
			}
			paths[oaPath][strings.ToLower(method)] = op
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("openapi: routes without a description: %s", strings.Join(missing, ", "))
	}
	schemas := tasks.RequestComponents()
	for name, s := range responseSchemas() {
		if _, dup := schemas[name]; dup {
			return nil, fmt.Errorf("openapi: two schemas named %s", name)
		}
		schemas[name] = s
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "geostat worker",
			"version":     version,
			"description": "Geostatistics compute tasks (knn, idw, kriging, declustering, continuous distribution, normal score, variogram model, conditional turning bands, simulation report, break ties, location-wise statistics, loss and profit classification) over a geoscience object store, with jobs, a file area and operations endpoints. Errors are application/problem+json (RFC 9457).",
		},
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"paths":             paths,
		"security":          []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas":         schemas,
		},
	}, nil
}

// operation describes one route; task is the task of a per-task path.
func operation(method, path string, rt route, task string, statuses []problem.Status) map[string]any {
	var params []any
	for _, m := range paramRE.FindAllStringSubmatch(path, -1) {
		p := map[string]any{"name": m[1], "in": "path", "required": true, "description": "path parameter", "schema": map[string]any{"type": "string"}}
		switch {
		case m[2] != "":
			p["description"] = "the rest of the path, slashes included"
		case m[1] == "task" && rt.topic != "":
			p["description"] = "the task"
			p["schema"] = map[string]any{"type": "string", "enum": tasks.Tasks(rt.topic)}
		}
		params = append(params, p)
	}
	responses := map[string]any{}
	for _, st := range statuses {
		code := strconv.Itoa(st.Code)
		r := map[string]any{"description": st.Meaning}
		if len(st.Types) > 0 {
			r["description"] = st.Meaning + " (problem types: " + strings.Join(st.Types, ", ") + ")"
		}
		status := st.Code
		switch {
		case rt.json[code] != "":
			r["content"] = jsonContent("application/json", rt.json[code])
		case code == "303":
			r["headers"] = map[string]any{"Location": map[string]any{"description": "the job status URL (compute), or the workspace (restore)", "schema": map[string]any{"type": "string"}}}
		case code == "422" && rt.topic != "":
			r["content"] = jsonContent("application/problem+json", "ValidationProblem")
		case status >= 400:
			r["content"] = jsonContent("application/problem+json", "Problem")
		}
		responses[code] = r
	}
	summary := rt.summary
	if task != "" {
		summary = task + ": " + summary
	}
	op := map[string]any{
		"summary":     summary,
		"operationId": operationID(method, path),
		"tags":        []string{rt.tag},
		"responses":   responses,
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if rt.public {
		op["security"] = []any{}
	}
	if rt.body != "" {
		media := map[string]any{}
		if task != "" {
			media["schema"], _ = tasks.RequestSchema(rt.topic, task)
		}
		if rt.bodySchema != "" {
			media["schema"] = map[string]any{"$ref": tasks.SchemaRefPrefix + rt.bodySchema}
		}
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{rt.body: media}}
	}
	return op
}

func jsonContent(media, schema string) map[string]any {
	return map[string]any{media: map[string]any{"schema": map[string]any{"$ref": tasks.SchemaRefPrefix + schema}}}
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
