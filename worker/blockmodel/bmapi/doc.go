// Package bmapi is the HTTP area of block models (/blockmodel/orgs/{org_id}/…):
// every route of the specification's route table on the worker's embedded
// column store (package bmstore), with the processing of package bmjob, the
// request decoding of package bmwire and the geometry of package blockmodel.
//
// # Routes
//
// Create (POST …/block-models) writes version 1 and the linked
// block-model geoscience object's version 1 in the call; its job is
// COMPLETE when the 201 is sent. Get, list (per workspace and per
// organisation), metadata update, soft delete and restore
// (?deleted=false, renaming "<name> (n)" on a clash) act on the model
// record. Versions, a single version (include_changes) and the delta check
// (200 or 304) read the versions. Units answer the fixed units table, and
// the eight report routes 501.
//
// # Jobs
//
// An update starts with PATCH …/blocks (202 with a signed upload_url when it
// reads a file), the file is PUT to that URL (the worker's signed blob
// URLs: whole body, or Azure block and block list), and POST
// …/jobs/{job}/uploaded queues it. A query (POST …/blocks) is queued at
// once. Both run on the worker's job layer (jobs.Manager, topic
// "blockmodel"; Area.Rebuild makes a queued job's Func again), while the
// job record of the area (PENDING_UPLOAD, QUEUED, PROCESSING, COMPLETE,
// FAILED and its payload) lives in the column store. Jobs of one model
// apply one at a time to its latest version; a failed job writes nothing.
// GET …/jobs/{job} signs fresh URLs at each read: the upload URL while
// PENDING_UPLOAD, the query output's and the error file's download URLs.
//
// # The linked object
//
// Each model has a block-model/1.0.0 geoscience object at
// <object_path>/<name>.json (ObjectDocument): geometry, rotation,
// bounding box, CRS and one attribute per user column, no data blobs. It
// gets a version with every model version (the version records it as
// geoscience_version_id) and with a change of the model's name,
// description or CRS; deleting or restoring the model deletes or restores
// it.
//
// # Roles
//
// Reads need any role in the workspace, writes editor or owner: no role →
// 404 workspace-not-found, too low → 403 block-model-service/auth/forbidden
// (your_role, permitted_roles), a deleted workspace → 410, no usable token
// → 401 block-model-service/auth/unauthorized.
package bmapi
