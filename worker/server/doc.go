// Package server is the embeddable geostat worker application, in the style of
// Prometheus Alertmanager: Options (with defaults and validation), New, Run,
// Stop and Handler. main only parses flags and hands over.
//
// # Routes
//
// Without Options.ObjectsURL the worker serves a subset of the Geoscience
// Object API over its embedded store (store.Embedded), under
// /geoscience-object/orgs/{org_id}/workspaces/{workspace_id}:
//
//	GET, POST       objects/path/{path...}   read; create or new version by path
//	DELETE          objects/path/{path...}   soft delete
//	GET             objects/{object_id}      read (version, include_versions, deleted, If-None-Match)
//	POST            objects/{object_id}      new version (If-Match); ?deleted=false restores
//	DELETE          objects/{object_id}      soft delete
//	GET             objects                  workspace listing (limit, offset, deleted)
//	PATCH           objects                  latest version ids (<= 500 ids)
//	PUT             data                     upload URLs for <= 32 blob names
//	GET             /geoscience-object/orgs/{org_id}/objects   organisation listing with filters
//
// plus GET /healthz (no auth) and the signed blob URLs PUT data and object
// responses hand out: PUT /blobs/{org}/{ws}/{name} (whole body, or the Azure
// block / block-list form) and GET/HEAD /blobs/{org}/{ws}/{name} (Range
// honoured). Signed URLs (package internal/urlsign, shared with the file
// content URLs) are HMAC-SHA256 over (operation, URL path, expiry) with the
// one key kept in DATA/url-signing-key; the signature is their only
// credential.
//
// # Auth
//
// Every route but /healthz and the signed blob URLs needs
// "Authorization: Bearer <token>". The static tokens come from
// Options.TokensFile (see TokenEntry), else the GEOSTAT_TOKEN environment
// variable (owner of every workspace), else a random development token
// generated in DATA/dev-token (mode 0600) whose location, never its value,
// is printed. With Options.Identity (the worker's identity store, see
// worker/workspaces) an Authenticator built from them authenticates every
// token, stored ones too, and each principal's live Roles answer the role
// questions; without it the static entries alone do, and any UUID is a
// workspace. A missing or unknown token is 401, a workspace unknown or
// without a role 404, a deleted one 410 workspace-service/gone, a viewer
// writing 403 insufficient-role with your_role and permitted_roles.
//
// # Errors
//
// Errors are problem-details JSON (application/problem+json) whose status
// member equals the HTTP status, rendered by package problem, where every
// type URI is defined: the object area's are problem.ObjectBase + the seed
// 7.3 suffix; HTTP-level errors (404 unknown route, 405 with Allow, 413,
// 503) are problem.HTTPBase + "/...".
//
// # Extension point for the compute tasks
//
// Options.ExtraRoutes(mux, deps) is called after the built-in routes are
// registered; it receives the *http.ServeMux (Go 1.22 patterns) and Deps: the
// Store, the Auth (wrap handlers with Auth.RequireOrg or Auth.RequireWorkspace;
// read the caller with PrincipalFrom), the Schemas, the Logger and BaseURL.
// Handlers report errors with WriteProblem (a *store.Error keeps its status
// and type) and answer with WriteJSON. App.Mux, App.Store and App.Auth give the
// same access after New.
package server
