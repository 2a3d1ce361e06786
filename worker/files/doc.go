// Package files is the worker's file area (platform API seed 4.6, file/v2):
// versioned files in workspaces, kept under the worker's data directory next
// to the embedded object store, with the same bearer-token auth as the object
// API. The compute tasks store their reports here.
//
// # Model
//
// A file has a UUID id, a path (case-insensitive, case-preserving; the last
// segment is its name) and immutable versions. A version id is a positive
// int64 written as a decimal string: the nanosecond timestamp at which the
// version was issued, strictly increasing across the store. The latest version
// is the one with the greatest id among those whose content has been stored.
// Each version carries its own path (a later upload may differ in case),
// created_at (UTC) and created_by; there is no modified_by. Deleting a file is
// a soft delete: it is no longer listed or found, its path becomes free (a
// later upload to it creates a new file), and its versions stay on disk.
//
// # Go API
//
// Open opens the store in DATA/files. Store.Put stores a new version at once
// (create or new version by path), Store.Get reads a version's record and
// content, Store.List pages through the live files, Store.Delete soft-deletes,
// and Store.DownloadURL / FileURL build the URLs clients use. Errors are
// *Error values carrying the HTTP status and problem type.
//
// # HTTP API
//
// Register adds, under /file/v2/orgs/{org_id}/workspaces/{workspace_id}:
//
//	PUT     files/path/{file_path...}   new file or new version by path -> 200 {file_id, version_id, upload_url}
//	PUT     files/{file_id}             new version by id              -> 200 {file_id, version_id, upload_url}
//	GET     files/path/{file_path...}   the record (version_id, include_versions)
//	GET     files/{file_id}             the record (version_id, include_versions)
//	DELETE  files/path/{file_path...}   soft delete -> 204
//	DELETE  files/{file_id}             soft delete -> 204
//	GET     files                       {files, total, limit, offset}; limit 1..5000 (default 100), offset >= 0
//
// and the signed content URLs it hands out:
//
//	PUT       /file/v2/content/{org}/{ws}/{file_id}/{version_id}?op=upload&se=..&sig=..    store the version's bytes (whole body) -> 201
//	GET, HEAD /file/v2/content/{org}/{ws}/{file_id}/{version_id}?op=download&se=..&sig=..  the bytes (Range honoured)
//	GET, HEAD /file/v2/content/{org}/{ws}/{file_id}/{version_id}?op=view&se=..&sig=..      the bytes inline, for a browser (ViewCSP)
//
// A PUT on the API reserves a version and answers with its upload URL; the
// version becomes visible (listed, readable, the latest) once its content has
// been uploaded there. The upload request's Content-Type becomes the version's
// content_type (default: from the name's extension). Reading needs the viewer
// role, writing editor or owner; a caller without a role in the workspace gets
// 404. A signed URL is its own credential: HMAC-SHA256 over (operation, URL
// path, expiry) with the worker's one URL-signing key, DATA/url-signing-key,
// which the blob URLs share (package internal/urlsign).
//
// # Paths
//
// Paths follow store.NormalisePath (no empty, "." or ".." segments, none of
// \:*?"<>| or control characters, a name shorter than 256 characters) without
// its .json rule; leading or trailing whitespace in a segment is rejected only
// when the request's API-Preview header lists
// enable-no-leading-or-trailing-whitespaces-check. Invalid paths are 400
// problems of type https://errors.geostat-engine.dev/file-api/files/invalid-path.
//
// # Storage
//
// Layout under DATA/files:
//
//	tmp/                                          temporary files (cleared at Open)
//	data/<org>/<ws>/<file id>/p-<version>.json   reserved version awaiting its content
//	data/<org>/<ws>/<file id>/c-<version>        a version's content
//	data/<org>/<ws>/<file id>/v-<version>.json   a version's record (the commit point)
//	data/<org>/<ws>/<file id>/deleted.json       soft-delete marker
//
// Every write goes to a temporary file that is fsynced and renamed into place
// (then the directory is fsynced); the content is renamed before the record,
// so a crash leaves either the complete version or none of it. One Store owns
// a directory at a time.
package files
