package bmapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/server"
	"github.com/geostat-engine/geostat/worker/store"
)

// modelDoc is what the area keeps in a model's bmstore record (Model.Data):
// the record the routes answer and what the engine needs besides.
type modelDoc struct {
	Record blockmodel.Record `json:"record"`
	// ObjectPath is the linked object's path (A.13).
	ObjectPath string `json:"object_path"`
	// ObjectVersions maps a model version number to the version id of the
	// linked object written for it (A.13 geoscience_version_id).
	ObjectVersions map[string]string `json:"object_versions,omitempty"`
	// Users are the full users who acted on the model, by id (a version
	// records only its creator's id).
	Users map[string]blockmodel.FullUser `json:"users,omitempty"`
	// OpenJobs are the model's jobs not finished yet (PENDING_UPLOAD or
	// QUEUED), failed when the model is deleted.
	OpenJobs []string `json:"open_jobs,omitempty"`
	// Lineage is the deprecated lineage member, stored verbatim.
	Lineage json.RawMessage `json:"lineage,omitempty"`
}

// model is a loaded model: its store record and decoded doc.
type model struct {
	m   bmstore.Model
	doc modelDoc
}

func (m *model) id() string      { return m.m.ID }
func (m *model) deleted() bool   { return m.m.DeletedAt != nil }
func (m *model) nameKey() string { return strings.ToLower(m.doc.Record.Name) }

// loadModel reads a model record (from the area's cache of the records:
// this process writes every one).
func (a *Area) loadModel(id string) (*model, error) {
	a.cacheMu.Lock()
	m, ok := a.cache[id]
	a.cacheMu.Unlock()
	if !ok {
		var err error
		if m, err = a.bm.GetModel(id); err != nil {
			return nil, err
		}
		a.cacheMu.Lock()
		a.cache[id] = m
		a.cacheMu.Unlock()
	}
	md := &model{m: m}
	if err := json.Unmarshal(m.Data, &md.doc); err != nil {
		return nil, fmt.Errorf("bmapi: model %s: record: %w", id, err)
	}
	return md, nil
}

// saveModel replaces a model record.
func (a *Area) saveModel(md *model) error {
	md.m.Data = jsonRaw(md.doc)
	if err := a.bm.PutModel(md.m); err != nil {
		return err
	}
	a.cacheMu.Lock()
	a.cache[md.id()] = md.m
	a.cacheMu.Unlock()
	return nil
}

// modelOf returns the model of a route: it must be in the call's workspace,
// and not deleted unless allowDeleted (404 not-found otherwise).
func (a *Area) modelOf(c *call, id string, allowDeleted bool) (*model, error) {
	id = strings.ToLower(id)
	md, err := a.loadModel(id)
	if errors.Is(err, bmstore.ErrNotFound) {
		return nil, errNotFound("block model %s not found", id)
	}
	if err != nil {
		return nil, err
	}
	if md.doc.Record.OrgUUID != c.org || md.doc.Record.WorkspaceID != c.ws || (md.deleted() && !allowDeleted) {
		return nil, errNotFound("block model %s not found", id)
	}
	return md, nil
}

// allModels returns every model record.
func (a *Area) allModels() ([]*model, error) {
	a.cacheMu.Lock()
	loaded := a.loaded
	a.cacheMu.Unlock()
	if !loaded {
		ids, err := a.bm.ListModels()
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if _, err := a.loadModel(id); err != nil {
				return nil, err
			}
		}
		a.cacheMu.Lock()
		a.loaded = true
		a.cacheMu.Unlock()
	}
	a.cacheMu.Lock()
	ids := make([]string, 0, len(a.cache))
	for id := range a.cache {
		ids = append(ids, id)
	}
	a.cacheMu.Unlock()
	out := make([]*model, 0, len(ids))
	for _, id := range ids {
		md, err := a.loadModel(id)
		if err != nil {
			return nil, err
		}
		out = append(out, md)
	}
	return out, nil
}

// nameTaken reports whether a live model of the workspace other than
// except has the name (case-insensitively, A.9.1 OPEN-11).
func (a *Area) nameTaken(org, ws, name, except string) (bool, error) {
	all, err := a.allModels()
	if err != nil {
		return false, err
	}
	key := strings.ToLower(name)
	for _, md := range all {
		r := md.doc.Record
		if r.OrgUUID == org && r.WorkspaceID == ws && !md.deleted() && md.id() != except && md.nameKey() == key {
			return true, nil
		}
	}
	return false, nil
}

func errNameConflict(name string) *problem.Error {
	return problem.New(http.StatusConflict, problem.BlockModelNameConflict, "Name Conflict.",
		fmt.Sprintf("a block model named %q exists in the workspace", name))
}

// fullUser is the full user record of a caller (A.3.2 self-hosted filling).
func fullUser(u store.User, org string) blockmodel.FullUser {
	f := blockmodel.FullUser{ID: u.ID}
	if u.ID == "" {
		f.ID = server.LocalUser.ID
	}
	if u.Email != "" {
		f.Email = &u.Email
	}
	if u.Name != "" {
		name := u.Name
		f.Name = &name
		first, last, _ := strings.Cut(name, " ")
		f.FirstName = &first
		if last != "" {
			f.LastName = &last
		}
	}
	if org != "" {
		o := org
		f.OrgID = &o
	}
	return f
}

// remember records a user's full record on the model.
func (md *model) remember(f blockmodel.FullUser) {
	if md.doc.Users == nil {
		md.doc.Users = map[string]blockmodel.FullUser{}
	}
	md.doc.Users[f.ID] = f
}

// user returns the full record of a user id (just the id when unknown).
func (md *model) user(id string) blockmodel.FullUser {
	if f, ok := md.doc.Users[id]; ok {
		return f
	}
	return blockmodel.FullUser{ID: id}
}

// jobURL is the absolute URL of a job (A.6.1).
func (a *Area) jobURL(r *http.Request, rec *blockmodel.Record, job string) string {
	return strings.TrimRight(a.baseURL(r), "/") + "/blockmodel/orgs/" + rec.OrgUUID + "/workspaces/" + rec.WorkspaceID +
		"/block-models/" + rec.BMUUID + "/jobs/" + job
}

// create serves POST …/block-models (A.9.1): version 1 and the linked
// object's version 1 are written in the call; its create job is COMPLETE
// when the 201 is sent.
func (a *Area) create(w http.ResponseWriter, r *http.Request, c *call) {
	b, err := body(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	md, job, err := a.createModel(r.Context(), c, b)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := md.doc.Record
	out.JobURL = a.jobURL(r, &out, job)
	writeJSON(w, http.StatusCreated, out)
}

// CreateModel creates a model in workspace (org, ws) from a create body,
// as POST …/block-models does for user by (the demo seeds one this way).
func (a *Area) CreateModel(ctx context.Context, org, ws string, body []byte, by store.User) (*blockmodel.Record, error) {
	md, _, err := a.createModel(ctx, &call{org: strings.ToLower(org), ws: strings.ToLower(ws), user: by}, body)
	if err != nil {
		return nil, err
	}
	rec := md.doc.Record
	return &rec, nil
}

// FindModel returns the live model of a workspace with a name
// (case-insensitively); ok is false when there is none.
func (a *Area) FindModel(org, ws, name string) (*blockmodel.Record, bool, error) {
	all, err := a.allModels()
	if err != nil {
		return nil, false, err
	}
	for _, md := range all {
		r := md.doc.Record
		if !md.deleted() && strings.EqualFold(r.OrgUUID, org) && strings.EqualFold(r.WorkspaceID, ws) && strings.EqualFold(r.Name, name) {
			return &r, true, nil
		}
	}
	return nil, false, nil
}

// createModel checks a create body (422 naming every bad member; 409 for
// a taken name or object path, before anything is stored) and writes
// version 1, the linked object's version 1 and the COMPLETE create job,
// whose id it returns.
func (a *Area) createModel(ctx context.Context, c *call, b []byte) (*model, string, error) {
	req, err := bmwire.DecodeCreate(b)
	if err != nil {
		return nil, "", err
	}
	g, err := blockmodel.NewGeometry(req.ModelOrigin, req.BlockRotation, req.SizeOptions)
	if err != nil {
		return nil, "", err
	}
	path := objectPath(req.ObjectPath, req.Name)
	if _, err := store.NormalisePath(path, false); err != nil {
		// The name is the object's file name; the folder alone may be at
		// fault.
		member := "name"
		if _, ferr := store.NormalisePath(objectPath(req.ObjectPath, "model"), false); ferr != nil {
			member = "object_path"
		}
		return nil, "", errValidation(member, "the linked object's path %q is not valid: %s", path, problem.From(err).Detail)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if taken, err := a.nameTaken(c.org, c.ws, req.Name, ""); err != nil {
		return nil, "", err
	} else if taken {
		return nil, "", errNameConflict(req.Name)
	}
	if _, err := a.objects.GetObject(ctx, c.workspace(), store.Ref{Path: path}); err == nil {
		return nil, "", problem.New(http.StatusConflict, problem.BlockModelNameConflict, "Name Conflict.",
			fmt.Sprintf("the path %q of the block model's geoscience object is taken by another object", path))
	} else if problem.StatusOf(err) != http.StatusNotFound {
		return nil, "", err
	}
	now := a.now().UTC()
	by := fullUser(c.user, c.org)
	id := bmstore.NewUUID()
	rec := blockmodel.Record{BMUUID: id, Name: req.Name, Description: req.Description, OrgUUID: c.org, WorkspaceID: c.ws,
		CoordinateReferenceSystem: req.CRS, SizeUnitID: req.SizeUnitID, FillSubblocks: req.FillSubblocks,
		CreatedAt: now, CreatedBy: by, LastUpdatedAt: now, LastUpdatedBy: by}
	rec.SetGeometry(g)
	md := &model{m: bmstore.Model{ID: id, CreatedAt: now}, doc: modelDoc{Record: rec, ObjectPath: path, Lineage: req.Lineage}}
	md.remember(by)
	md.m.Data = jsonRaw(md.doc)
	tx, err := a.bm.Create(md.m, g.NumParents())
	if err != nil {
		return nil, "", err
	}
	comment := ""
	if req.Comment != nil {
		comment = *req.Comment
	}
	v, err := tx.Commit(bmstore.Meta{CreatedBy: by.ID, Comment: comment, CreatedAt: now})
	if err != nil {
		return nil, "", err
	}
	ov, err := a.putObject(ctx, md, v, c.user, true)
	if err != nil {
		// The model must not stay without its object: it is withdrawn.
		md.m.DeletedAt, md.m.DeletedBy = &now, by.ID
		if e := a.saveModel(md); e != nil {
			a.logger.Error("withdrawing a block model whose object could not be written", "bm_uuid", id, "err", e)
		}
		return nil, "", err
	}
	md.setObjectVersion(v.VersionID, ov)
	if err := a.saveModel(md); err != nil {
		return nil, "", err
	}
	job, err := a.bm.CreateJob(bmstore.Job{ModelID: id, Kind: bmstore.JobCreate, Status: bmstore.Queued, CreatedAt: now})
	if err == nil {
		_, err = a.bm.TransitionJob(job.ID, bmstore.Queued, bmstore.Processing, nil)
	}
	if err == nil {
		_, err = a.bm.TransitionJob(job.ID, bmstore.Processing, bmstore.Complete, jsonRaw(jobState{Org: c.org, WS: c.ws,
			Version: a.versionRecord(md, v, false)}))
	}
	if err != nil {
		return nil, "", err
	}
	return md, job.ID, nil
}

// objectPath is the linked object's path: <object_path>/<name>.json
// (A.13, OPEN-29), in the root folder when object_path is absent.
func objectPath(folder *string, name string) string {
	dir := ""
	if folder != nil {
		dir = strings.Trim(*folder, "/")
	}
	if dir == "" {
		return name + ".json"
	}
	return dir + "/" + name + ".json"
}

func (md *model) setObjectVersion(n int, ov string) {
	if md.doc.ObjectVersions == nil {
		md.doc.ObjectVersions = map[string]string{}
	}
	md.doc.ObjectVersions[strconv.Itoa(n)] = ov
}

func (md *model) objectVersion(n int) *string {
	if ov, ok := md.doc.ObjectVersions[strconv.Itoa(n)]; ok {
		return &ov
	}
	return nil
}

// get serves GET …/block-models/{bm} (deleted=true reads a deleted model).
func (a *Area) get(w http.ResponseWriter, r *http.Request, c *call) {
	deleted, err := boolParam(r.URL.Query(), "deleted", false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	md, err := a.modelOf(c, r.PathValue("bm_id"), deleted)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, md.doc.Record)
}

// boolParam reads an optional boolean query parameter as the client spells
// it (True/False); another value is a 422 naming it.
func boolParam(q url.Values, name string, def bool) (bool, error) {
	v, ok := q[name]
	if !ok || len(v) == 0 || v[0] == "" {
		return def, nil
	}
	b, err := bmwire.ParseBool(name, v[0])
	if err != nil {
		return false, errValidation(name, "%q is not a boolean", v[0])
	}
	return b, nil
}

// Page is a page of a listing (the client's Paginated* models).
type Page[T any] struct {
	Count   int `json:"count"`
	Limit   int `json:"limit"`
	Offset  int `json:"offset"`
	Total   int `json:"total"`
	Results []T `json:"results"`
}

// paging reads offset (≥ 0, default 0) and limit (1…100, default 50).
func paging(q url.Values) (offset, limit int, err error) {
	e := &blockmodel.ValidationError{}
	offset, limit = 0, 50
	if s := q.Get("offset"); s != "" {
		n, perr := strconv.Atoi(s)
		if perr != nil || n < 0 {
			e.Add("offset", "%q: want an integer of at least 0", s)
		}
		offset = n
	}
	if s := q.Get("limit"); s != "" {
		n, perr := strconv.Atoi(s)
		if perr != nil || n < 1 || n > 100 {
			e.Add("limit", "%q: want an integer in 1..100", s)
		}
		limit = n
	}
	return offset, limit, e.Err()
}

// orderKey is one key of order_by.
type orderKey struct {
	field string
	desc  bool
}

// orderBy reads order_by: name, created_at, last_updated_at, each at most
// once, with an asc: or desc: prefix, comma separated; default
// desc:last_updated_at.
func orderBy(q url.Values) ([]orderKey, error) {
	s := q.Get("order_by")
	if s == "" {
		return []orderKey{{"last_updated_at", true}}, nil
	}
	var out []orderKey
	for _, part := range strings.Split(s, ",") {
		k := orderKey{field: strings.TrimSpace(part)}
		if rest, ok := strings.CutPrefix(k.field, "desc:"); ok {
			k.field, k.desc = rest, true
		} else if rest, ok := strings.CutPrefix(k.field, "asc:"); ok {
			k.field = rest
		}
		switch k.field {
		case "name", "created_at", "last_updated_at":
		default:
			return nil, errValidation("order_by", "%q: want name, created_at or last_updated_at, with an optional asc: or desc: prefix", part)
		}
		if slices.ContainsFunc(out, func(o orderKey) bool { return o.field == k.field }) {
			return nil, errValidation("order_by", "%q is given twice", k.field)
		}
		out = append(out, k)
	}
	return out, nil
}

// sortRecords orders records by keys (then by id, for a stable paging).
func sortRecords(recs []blockmodel.Record, keys []orderKey) {
	slices.SortStableFunc(recs, func(x, y blockmodel.Record) int {
		for _, k := range keys {
			var d int
			switch k.field {
			case "name":
				d = strings.Compare(strings.ToLower(x.Name), strings.ToLower(y.Name))
			case "created_at":
				d = x.CreatedAt.Compare(y.CreatedAt)
			case "last_updated_at":
				d = x.LastUpdatedAt.Compare(y.LastUpdatedAt)
			}
			if k.desc {
				d = -d
			}
			if d != 0 {
				return d
			}
		}
		return strings.Compare(x.BMUUID, y.BMUUID)
	})
}

// listing answers a page of the models that keep passes.
func (a *Area) listing(w http.ResponseWriter, r *http.Request, keep func(md *model) (bool, error)) {
	q := r.URL.Query()
	deleted, err := boolParam(q, "deleted", false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	offset, limit, err := paging(q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	keys, err := orderBy(q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	all, err := a.allModels()
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var recs []blockmodel.Record
	for _, md := range all {
		if md.deleted() != deleted {
			continue
		}
		ok, err := keep(md)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if ok {
			recs = append(recs, md.doc.Record)
		}
	}
	sortRecords(recs, keys)
	page := Page[blockmodel.Record]{Limit: limit, Offset: offset, Total: len(recs), Results: []blockmodel.Record{}}
	if offset < len(recs) {
		page.Results = recs[offset:min(len(recs), offset+limit)]
	}
	page.Count = len(page.Results)
	writeJSON(w, http.StatusOK, page)
}

// list serves GET …/workspaces/{ws}/block-models.
func (a *Area) list(w http.ResponseWriter, r *http.Request, c *call) {
	a.listing(w, r, func(md *model) (bool, error) {
		return md.doc.Record.OrgUUID == c.org && md.doc.Record.WorkspaceID == c.ws, nil
	})
}

// listOrg serves GET /blockmodel/orgs/{org}/block-models: the models of
// every live workspace of the organisation where the caller has a role.
func (a *Area) listOrg(w http.ResponseWriter, r *http.Request, c *call) {
	p := server.PrincipalFrom(r.Context())
	seen := map[string]bool{}
	a.listing(w, r, func(md *model) (bool, error) {
		rec := md.doc.Record
		if rec.OrgUUID != c.org {
			return false, nil
		}
		ok, known := seen[rec.WorkspaceID]
		if !known {
			acc, err := p.Resolve(r.Context(), c.org, rec.WorkspaceID)
			if err != nil {
				return false, err
			}
			ok = acc.Role != "" && acc.State != server.WorkspaceUnknown && acc.State != server.WorkspaceDeleted
			seen[rec.WorkspaceID] = ok
		}
		return ok, nil
	})
}

// patch serves PATCH …/block-models/{bm} (A.9.3): no version; the linked
// object gets a version when the name, description or CRS change.
func (a *Area) patch(w http.ResponseWriter, r *http.Request, c *call) {
	b, err := body(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	req, err := bmwire.DecodeMetadataUpdate(b)
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
	rec := &md.doc.Record
	objectChange := false
	if req.Name != nil && *req.Name != rec.Name {
		if taken, err := a.nameTaken(c.org, c.ws, *req.Name, md.id()); err != nil {
			a.fail(w, r, err)
			return
		} else if taken {
			a.fail(w, r, errNameConflict(*req.Name))
			return
		}
		rec.Name, objectChange = *req.Name, true
	}
	if req.Description != nil && (rec.Description == nil || *rec.Description != *req.Description) {
		rec.Description, objectChange = req.Description, true
	}
	if req.CRS != nil && (rec.CoordinateReferenceSystem == nil || *rec.CoordinateReferenceSystem != *req.CRS) {
		rec.CoordinateReferenceSystem, objectChange = req.CRS, true
	}
	if req.SizeUnitID != nil {
		rec.SizeUnitID = req.SizeUnitID
	}
	if req.FillSubblocks != nil {
		rec.FillSubblocks = *req.FillSubblocks
	}
	if len(req.Lineage) > 0 {
		md.doc.Lineage = req.Lineage
	}
	by := fullUser(c.user, c.org)
	md.remember(by)
	rec.LastUpdatedAt, rec.LastUpdatedBy = a.now().UTC(), by
	if objectChange {
		n, err := a.bm.Latest(md.id())
		if err != nil {
			a.fail(w, r, err)
			return
		}
		v, err := a.bm.Version(md.id(), n)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if _, err := a.putObject(r.Context(), md, v, c.user, false); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	if err := a.saveModel(md); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, md.doc.Record)
}

// delete serves DELETE …/block-models/{bm} (A.9.4): a soft delete; the
// model's pending and queued jobs fail (job/model-deleted) and the linked
// object is deleted too.
func (a *Area) delete(w http.ResponseWriter, r *http.Request, c *call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	now := a.now().UTC()
	by := fullUser(c.user, c.org)
	md.m.DeletedAt, md.m.DeletedBy = &now, by.ID
	md.remember(by)
	failed := problem.Problem{Type: problem.BlockModelJobModelDeleted, Title: "Block Model Deleted.", Status: http.StatusGone,
		Detail: fmt.Sprintf("block model %s was deleted before the job ran", md.id())}
	for _, id := range md.doc.OpenJobs {
		a.failOpenJob(id, failed)
	}
	md.doc.OpenJobs = nil
	if err := a.saveModel(md); err != nil {
		a.fail(w, r, err)
		return
	}
	if id := md.doc.Record.GeoscienceObjectID; id != nil {
		err := a.objects.DeleteObject(r.Context(), c.workspace(), store.Ref{ID: *id}, c.user)
		if err != nil && problem.StatusOf(err) != http.StatusNotFound {
			a.logger.Error("deleting the geoscience object of a deleted block model", "bm_uuid", md.id(), "object_id", *id, "err", err)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// failOpenJob fails a pending or queued job with p (a job past those states
// is left as it is).
func (a *Area) failOpenJob(id string, p problem.Problem) {
	j, err := a.bm.GetJob(id)
	if err != nil {
		return
	}
	var st jobState
	_ = json.Unmarshal(j.Payload, &st)
	st.Problem = &p
	for _, from := range []bmstore.JobStatus{bmstore.PendingUpload, bmstore.Queued} {
		if _, err := a.bm.TransitionJob(id, from, bmstore.Failed, jsonRaw(st)); err == nil {
			a.forgetUpload(id, st)
			return
		}
	}
}

// maxRestoreSuffix bounds the rename of a restored model (A.9.5, OPEN-12).
const maxRestoreSuffix = 99

// restore serves POST …/block-models/{bm}?deleted=false (A.9.5): 202 with
// the record, renamed "<name> (n)" when its name is taken meanwhile.
func (a *Area) restore(w http.ResponseWriter, r *http.Request, c *call) {
	q := r.URL.Query()
	v, ok := q["deleted"]
	if !ok || len(v) == 0 {
		a.fail(w, r, errInvalidQuery("restore needs the query parameter deleted=false"))
		return
	}
	deleted, err := bmwire.ParseBool("deleted", v[0])
	if err != nil {
		a.write(w, r, problem.From(err))
		return
	}
	if deleted {
		a.fail(w, r, errInvalidQuery("restore needs deleted=false"))
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	md, err := a.modelOf(c, r.PathValue("bm_id"), true)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !md.deleted() {
		writeJSON(w, http.StatusAccepted, md.doc.Record)
		return
	}
	rec := &md.doc.Record
	name := rec.Name
	for n := 1; ; n++ {
		taken, err := a.nameTaken(c.org, c.ws, name, md.id())
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if !taken {
			break
		}
		if n > maxRestoreSuffix {
			a.write(w, r, problem.Problem{Type: problem.BlockModelRestoreError, Title: "Restore Error.", Status: http.StatusInternalServerError,
				Detail: fmt.Sprintf("no free name for the restored block model: %q and %q to %q are taken", rec.Name,
					rec.Name+" (1)", fmt.Sprintf("%s (%d)", rec.Name, maxRestoreSuffix))})
			return
		}
		name = fmt.Sprintf("%s (%d)", rec.Name, n)
	}
	renamed := name != rec.Name
	by := fullUser(c.user, c.org)
	md.remember(by)
	rec.Name = name
	rec.LastUpdatedAt, rec.LastUpdatedBy = a.now().UTC(), by
	md.m.DeletedAt, md.m.DeletedBy = nil, ""
	if id := rec.GeoscienceObjectID; id != nil {
		if _, err := a.objects.RestoreObject(r.Context(), c.workspace(), *id, c.user); err != nil && problem.StatusOf(err) != http.StatusNotFound {
			a.fail(w, r, err)
			return
		}
	}
	if renamed {
		n, err := a.bm.Latest(md.id())
		if err == nil {
			var ver *bmstore.Version
			if ver, err = a.bm.Version(md.id(), n); err == nil {
				_, err = a.putObject(r.Context(), md, ver, c.user, false)
			}
		}
		if err != nil {
			a.fail(w, r, err)
			return
		}
	}
	if err := a.saveModel(md); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, md.doc.Record)
}

// latest returns a model's geometry and latest version.
func (a *Area) latest(md *model) (*blockmodel.Geometry, *bmstore.Version, error) {
	g, err := md.doc.Record.Geometry()
	if err != nil {
		return nil, nil, fmt.Errorf("bmapi: model %s geometry: %w", md.id(), err)
	}
	n, err := a.bm.Latest(md.id())
	if err != nil {
		return nil, nil, err
	}
	v, err := a.bm.Version(md.id(), n)
	if err != nil {
		return nil, nil, err
	}
	return g, v, nil
}

// recordVersion writes the linked object's versions mirroring the model's
// new versions up to its latest (v, a version of an update job or a
// compute task, and any version committed meanwhile whose object version
// is not written yet), in version order, so that the object's latest
// version always mirrors the model's latest; each id is recorded as its
// version's geoscience_version_id. The model's last update is set.
func (a *Area) recordVersion(ctx context.Context, modelID string, v *bmstore.Version, by store.User) (*model, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	md, err := a.loadModel(modelID)
	if err != nil {
		return nil, err
	}
	latest, err := a.bm.Latest(modelID)
	if err != nil {
		return nil, err
	}
	done := 0
	for k := range md.doc.ObjectVersions {
		if n, err := strconv.Atoi(k); err == nil && n > done {
			done = n
		}
	}
	for n := done + 1; n <= latest; n++ {
		ver := v
		author := by
		if n != v.VersionID {
			if ver, err = a.bm.Version(modelID, n); err != nil {
				return nil, err
			}
			author = store.User{ID: ver.CreatedBy}
		}
		ov, err := a.putObject(ctx, md, ver, author, false)
		if err != nil {
			return nil, err
		}
		md.setObjectVersion(n, ov)
	}
	f := md.user(by.ID)
	if f.Email == nil && f.Name == nil {
		f = fullUser(by, md.doc.Record.OrgUUID)
	}
	md.remember(f)
	md.doc.Record.LastUpdatedAt, md.doc.Record.LastUpdatedBy = a.now().UTC(), f
	if err := a.saveModel(md); err != nil {
		return nil, err
	}
	return md, nil
}
