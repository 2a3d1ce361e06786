package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
	"github.com/geostat-engine/geostat/worker/objects"
)

// EmbeddedOptions configures the embedded store.
type EmbeddedOptions struct {
	// Dir is the data directory (created if missing).
	Dir string
	// Schemas validates documents on write; nil means the schemas embedded
	// in the binary (objects.EmbeddedSchemas). Every document is validated.
	Schemas *objects.Schemas
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Embedded is the on-disk store: objects, versions and blobs under one data
// directory. Every write is atomic (temporary file, fsync, rename, directory
// fsync); a version file, once renamed into place, is never overwritten.
// The rename of the version file is the commit point of a new version, so a
// crash before it leaves the previous version the latest one.
//
// Layout under Dir:
//
//	objects/<org>/<workspace>/<object id>/v-<version id>.json   versions
//	objects/<org>/<workspace>/<object id>/deleted.json          soft delete
//	blobs/<org>/<workspace>/<key[:2]>/<key>                      blobs
//	staging/<org>/<workspace>/<key>/<block id hex>               block uploads
//	tmp/                                                         temporary files
//
// An in-memory index (rebuilt from the files at open) maps paths and ids to
// objects; one mutex serialises metadata changes.
type Embedded struct {
	dir     string
	schemas *objects.Schemas
	now     func() time.Time

	mu      sync.Mutex
	spaces  map[Workspace]*space
	lastVID int64

	// hook, when set, is called at named points of a write ("version-synced":
	// the new version file is written and fsynced but not yet renamed into
	// place). Tests use it to simulate a crash.
	hook func(point string)

	// blobMu serialises blob commits, so that the check that a blob is new
	// and its rename into place are one step (blobs are immutable).
	blobMu sync.Mutex
}

type space struct {
	objects map[string]*object // by id
	byPath  map[string]*object // live objects by lower-cased path
}

type object struct {
	id       string
	versions []int64 // ascending
	latest   versionHeader
	deleted  *deletion
}

type deletion struct {
	At time.Time `json:"deleted_at"`
	By *User     `json:"deleted_by"`
}

// versionHeader is a version file without its document.
type versionHeader struct {
	ObjectID   string    `json:"object_id"`
	Path       string    `json:"object_path"`
	VersionID  string    `json:"version_id"`
	Schema     string    `json:"schema"`
	CreatedAt  time.Time `json:"created_at"`
	CreatedBy  *User     `json:"created_by"`
	ModifiedAt time.Time `json:"modified_at"`
	ModifiedBy *User     `json:"modified_by"`
	DataKeys   []string  `json:"data_keys"`
}

type versionFile struct {
	versionHeader
	Object json.RawMessage `json:"object"`
}

// OpenEmbedded opens (or creates) the store in opts.Dir and rebuilds the
// index. Leftover temporary files of interrupted writes and block uploads are
// removed.
func OpenEmbedded(opts EmbeddedOptions) (*Embedded, error) {
	if opts.Dir == "" {
		return nil, errors.New("store: embedded store needs a directory")
	}
	if opts.Schemas == nil {
		sch, err := objects.EmbeddedSchemas()
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		opts.Schemas = sch
	}
	s := &Embedded{dir: opts.Dir, schemas: opts.Schemas, now: opts.Now, spaces: map[Workspace]*space{}}
	if s.now == nil {
		s.now = time.Now
	}
	for _, d := range []string{"objects", "blobs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
	}
	for _, d := range []string{"tmp", "staging"} {
		if err := os.RemoveAll(filepath.Join(s.dir, d)); err != nil {
			return nil, fmt.Errorf("store: cleaning %s: %w", d, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("store: loading %s: %w", s.dir, err)
	}
	return s, nil
}

// Dir returns the data directory.
func (s *Embedded) Dir() string { return s.dir }

// Close releases the store (nothing is buffered).
func (s *Embedded) Close() error { return nil }

func (s *Embedded) load() error {
	root := filepath.Join(s.dir, "objects")
	orgs, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, org := range orgs {
		wss, err := os.ReadDir(filepath.Join(root, org.Name()))
		if err != nil {
			return err
		}
		for _, wsd := range wss {
			ws := Workspace{Org: org.Name(), ID: wsd.Name()}
			objs, err := os.ReadDir(filepath.Join(root, ws.Org, ws.ID))
			if err != nil {
				return err
			}
			for _, od := range objs {
				if err := s.loadObject(ws, od.Name()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *Embedded) loadObject(ws Workspace, id string) error {
	dir := s.objectDir(ws, id)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	o := &object{id: id}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "v-") || !strings.HasSuffix(name, ".json") {
			continue
		}
		vid, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(name, "v-"), ".json"), 10, 64)
		if err != nil {
			continue
		}
		o.versions = append(o.versions, vid)
	}
	if len(o.versions) == 0 {
		return nil
	}
	slices.Sort(o.versions)
	last := o.versions[len(o.versions)-1]
	vf, err := s.readVersion(ws, id, last)
	if err != nil {
		return err
	}
	o.latest = vf.versionHeader
	s.lastVID = max(s.lastVID, last)
	if data, err := os.ReadFile(filepath.Join(dir, "deleted.json")); err == nil {
		var d deletion
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("%s/deleted.json: %w", dir, err)
		}
		o.deleted = &d
	} else if !os.IsNotExist(err) {
		return err
	}
	sp := s.space(ws)
	sp.objects[id] = o
	if o.deleted == nil {
		sp.byPath[pathKey(o.latest.Path)] = o
	}
	return nil
}

func (s *Embedded) space(ws Workspace) *space {
	sp := s.spaces[ws]
	if sp == nil {
		sp = &space{objects: map[string]*object{}, byPath: map[string]*object{}}
		s.spaces[ws] = sp
	}
	return sp
}

func (s *Embedded) objectDir(ws Workspace, id string) string {
	return filepath.Join(s.dir, "objects", ws.Org, ws.ID, id)
}

func (s *Embedded) versionPath(ws Workspace, id string, vid int64) string {
	return filepath.Join(s.objectDir(ws, id), "v-"+strconv.FormatInt(vid, 10)+".json")
}

func (s *Embedded) readVersion(ws Workspace, id string, vid int64) (*versionFile, error) {
	data, err := os.ReadFile(s.versionPath(ws, id, vid))
	if err != nil {
		return nil, err
	}
	var vf versionFile
	if err := json.Unmarshal(data, &vf); err != nil {
		return nil, fmt.Errorf("version file %s/%d: %w", id, vid, err)
	}
	return &vf, nil
}

// checkWorkspace guards the directory layout against hostile ids.
func checkWorkspace(ws Workspace) error {
	if !objects.IsUUID(ws.Org) || !objects.IsUUID(ws.ID) {
		return ErrValidation("organisation and workspace ids must be UUIDs")
	}
	return nil
}

func normWorkspace(ws Workspace) Workspace {
	return Workspace{Org: strings.ToLower(ws.Org), ID: strings.ToLower(ws.ID)}
}

func (o *object) version(vf *versionFile, deleted *deletion) *Version {
	v := &Version{
		ObjectID: vf.ObjectID, Path: vf.Path, VersionID: vf.VersionID, Schema: vf.Schema,
		CreatedAt: vf.CreatedAt, CreatedBy: vf.CreatedBy, ModifiedAt: vf.ModifiedAt, ModifiedBy: vf.ModifiedBy,
		Object: vf.Object, DataKeys: vf.DataKeys,
	}
	if deleted != nil {
		at := deleted.At
		v.DeletedAt, v.DeletedBy = &at, deleted.By
	}
	return v
}

// lookup resolves a ref to an object (live, or deleted when allowed).
// Callers hold s.mu.
func (s *Embedded) lookup(ws Workspace, ref Ref) (*object, error) {
	sp := s.spaces[ws]
	if ref.ID != "" {
		id := strings.ToLower(ref.ID)
		if !objects.IsUUID(id) {
			return nil, ErrValidation(fmt.Sprintf("object id %q is not a UUID", ref.ID))
		}
		if sp == nil || sp.objects[id] == nil || sp.objects[id].deleted != nil && !ref.Deleted {
			return nil, ErrNotFound(id, fmt.Sprintf("no object with id %s", id))
		}
		return sp.objects[id], nil
	}
	p := strings.TrimPrefix(ref.Path, "/")
	if sp == nil || sp.byPath[pathKey(p)] == nil {
		return nil, ErrNotFound("", fmt.Sprintf("no object at path %q", p))
	}
	return sp.byPath[pathKey(p)], nil
}

// GetObject implements Store.
func (s *Embedded) GetObject(ctx context.Context, ws Workspace, ref Ref) (*Version, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	ws = normWorkspace(ws)
	s.mu.Lock()
	o, err := s.lookup(ws, ref)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	vid := o.versions[len(o.versions)-1]
	if ref.Version != "" {
		n, err := strconv.ParseInt(ref.Version, 10, 64)
		if err != nil || !slices.Contains(o.versions, n) {
			s.mu.Unlock()
			return nil, ErrNotFound(o.id, fmt.Sprintf("object %s has no version %q", o.id, ref.Version))
		}
		vid = n
	}
	versions := slices.Clone(o.versions)
	deleted := o.deleted
	s.mu.Unlock()

	vf, err := s.readVersion(ws, o.id, vid)
	if err != nil {
		return nil, ErrStorage(err)
	}
	v := o.version(vf, deleted)
	// created_at/created_by are those of the object, whatever the version.
	if ref.IncludeVersions {
		for i := len(versions) - 1; i >= 0; i-- {
			h, err := s.readVersion(ws, o.id, versions[i])
			if err != nil {
				return nil, ErrStorage(err)
			}
			v.History = append(v.History, VersionInfo{VersionID: h.VersionID, CreatedAt: h.ModifiedAt, CreatedBy: h.ModifiedBy})
		}
	}
	return v, nil
}

// validateDocument checks a document before it is stored: JSON object with
// finite numbers, a schema member, valid and present data keys, and the
// schema. It returns the decoded document and its data keys.
func (s *Embedded) validateDocument(ws Workspace, body []byte) (map[string]any, []string, error) {
	doc, err := objects.DecodeJSON(body)
	if err != nil {
		var nf *objects.NonFiniteError
		if errors.As(err, &nf) {
			return nil, nil, ErrInvalidObject(nf.Error(), nf.Path, nil)
		}
		return nil, nil, ErrBadRequest(err.Error())
	}
	schema, ok := doc["schema"].(string)
	if !ok || schema == "" {
		return nil, nil, ErrInvalidObject("the object has no schema member", "/schema", nil)
	}
	keys, invalid := objects.DataKeys(doc)
	if len(invalid) > 0 {
		return nil, nil, ErrInvalidKey(invalid)
	}
	if err := s.schemas.Validate(doc); err != nil {
		var se *objects.SchemaError
		if errors.As(err, &se) {
			if se.NotFound {
				return nil, nil, ErrSchemaNotFound(schema)
			}
			return nil, nil, ErrInvalidObject(se.Detail, se.JSONPath, se.SchemaPath)
		}
		return nil, nil, ErrInternal(err)
	}
	var missing []string
	for _, k := range keys {
		// A private blob (ReserveBlob) is not there for objects.
		if _, err := os.Stat(s.blobPath(ws, k)); err != nil || s.isPrivate(ws, k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, nil, ErrDataKeyNotFound(missing)
	}
	return doc, keys, nil
}

// schemaKind returns the schema id without its version: "/objects/pointset".
func schemaKind(schema string) string {
	if id, err := objects.ParseSchemaID(schema); err == nil {
		return "/objects/" + string(id.Kind)
	}
	return schema
}

// trimETag strips quotes and a weak prefix from an If-Match value.
func trimETag(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "W/"))
	return strings.Trim(s, `"`)
}

// PutObject implements Store. By path: a document with uuid null creates an
// object (409 when the path is taken, compared case-insensitively); a
// document with a uuid updates that object and moves it to the path when it
// differs (409 when another object holds the path). By id: the document's
// uuid must be null or the id. IfMatch must name the latest version (412).
// The schema type may not change (a version change is allowed).
func (s *Embedded) PutObject(ctx context.Context, ws Workspace, req PutRequest) (*Version, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	ws = normWorkspace(ws)
	if (req.Path == "") == (req.ID == "") {
		return nil, ErrBadRequest("exactly one of path and id must be given")
	}
	var path string
	if req.Path != "" {
		p, err := NormalisePath(req.Path, req.CheckWhitespace)
		if err != nil {
			return nil, err
		}
		path = p
	} else if !objects.IsUUID(req.ID) {
		return nil, ErrValidation(fmt.Sprintf("object id %q is not a UUID", req.ID))
	}
	doc, keys, err := s.validateDocument(ws, req.Object)
	if err != nil {
		return nil, err
	}
	var bodyID string
	switch u := doc["uuid"].(type) {
	case nil:
	case string:
		if !objects.IsUUID(u) {
			return nil, ErrInvalidObject(fmt.Sprintf("uuid %q is not a UUID", u), "/uuid", nil)
		}
		bodyID = strings.ToLower(u)
	default:
		return nil, ErrInvalidObject("uuid must be a string or null", "/uuid", nil)
	}
	schema := doc["schema"].(string)

	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.space(ws)
	var o *object
	switch {
	case req.ID != "":
		id := strings.ToLower(req.ID)
		if bodyID != "" && bodyID != id {
			return nil, ErrBadRequest(fmt.Sprintf("the document's uuid %s differs from the object id %s", bodyID, id))
		}
		if o = sp.objects[id]; o == nil || o.deleted != nil {
			return nil, ErrNotFound(id, fmt.Sprintf("no object with id %s", id))
		}
		path = o.latest.Path
	case bodyID == "":
		if other := sp.byPath[pathKey(path)]; other != nil {
			return nil, ErrAlreadyExists(other.id, other.latest.Path)
		}
	default:
		if o = sp.objects[bodyID]; o == nil || o.deleted != nil {
			return nil, ErrNotFound(bodyID, fmt.Sprintf("no object with id %s", bodyID))
		}
		if other := sp.byPath[pathKey(path)]; other != nil && other != o {
			return nil, ErrAlreadyExists(other.id, other.latest.Path)
		}
	}
	if req.IfMatch != "" {
		want := trimETag(req.IfMatch)
		if o == nil || o.latest.VersionID != want {
			cur := ""
			if o != nil {
				cur = o.latest.VersionID
			}
			return nil, with(ErrModified(fmt.Sprintf("If-Match %q is not the latest version %q", want, cur)), "latest_version_id", cur)
		}
	}
	if o != nil && schemaKind(o.latest.Schema) != schemaKind(schema) {
		return nil, ErrObjectError(fmt.Sprintf("the object's schema type is %s; a new version cannot change it to %s", o.latest.Schema, schema))
	}

	now := s.now().UTC()
	vid := max(now.UnixNano(), s.lastVID+1)
	if o != nil {
		vid = max(vid, o.versions[len(o.versions)-1]+1)
	}
	id := bodyID
	if o != nil {
		id = o.id
	} else {
		id = uuid.NewString()
	}
	doc["uuid"] = id
	body, err := objects.EncodeJSON(doc)
	if err != nil {
		return nil, ErrInternal(err)
	}
	by := req.By
	hdr := versionHeader{
		ObjectID: id, Path: path, VersionID: strconv.FormatInt(vid, 10), Schema: schema,
		CreatedAt: time.Unix(0, vid).UTC(), CreatedBy: &by, ModifiedAt: time.Unix(0, vid).UTC(), ModifiedBy: &by,
		DataKeys: keys,
	}
	if o != nil {
		hdr.CreatedAt, hdr.CreatedBy = o.latest.CreatedAt, o.latest.CreatedBy
	}
	if err := s.commitVersion(ws, hdr, body); err != nil {
		return nil, err
	}
	if o == nil {
		o = &object{id: id}
		sp.objects[id] = o
	} else {
		delete(sp.byPath, pathKey(o.latest.Path))
	}
	o.versions = append(o.versions, vid)
	o.latest = hdr
	sp.byPath[pathKey(path)] = o
	s.lastVID = vid
	return o.version(&versionFile{versionHeader: hdr, Object: body}, nil), nil
}

// commitVersion writes a version file; its rename is the commit point.
// Callers hold s.mu.
func (s *Embedded) commitVersion(ws Workspace, hdr versionHeader, body []byte) error {
	data, err := json.Marshal(versionFile{versionHeader: hdr, Object: body})
	if err != nil {
		return ErrInternal(err)
	}
	vid, _ := strconv.ParseInt(hdr.VersionID, 10, 64)
	path := s.versionPath(ws, hdr.ObjectID, vid)
	if _, err := os.Stat(path); err == nil {
		return ErrInternal(fmt.Errorf("version file %s exists; versions are never overwritten", path))
	}
	var before func()
	if s.hook != nil {
		before = func() { s.hook("version-synced") }
	}
	if err := atomicfile.Write(filepath.Join(s.dir, "tmp"), path, data, before); err != nil {
		return writeError("writing the object version", err)
	}
	return nil
}

// ListObjects implements Store: the workspace's live (or deleted) objects,
// ordered by path.
func (s *Embedded) ListObjects(ctx context.Context, ws Workspace, opt ListOptions) (*Page, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	ws = normWorkspace(ws)
	s.mu.Lock()
	cs := s.candidates(ws, opt.Deleted, "")
	s.mu.Unlock()
	if err := sortCandidates(cs, nil); err != nil {
		return nil, err
	}
	return paginate(cs, opt.Limit, opt.Offset), nil
}

// candidates returns the objects of a workspace for a listing. Callers hold
// s.mu.
func (s *Embedded) candidates(ws Workspace, deleted bool, access string) []*candidate {
	sp := s.spaces[ws]
	if sp == nil {
		return nil
	}
	var out []*candidate
	for _, o := range sp.objects {
		if (o.deleted != nil) != deleted {
			continue
		}
		h := o.latest
		it := ListItem{
			ObjectID: o.id, Name: objectName(h.Path), Path: h.Path, Schema: h.Schema, VersionID: h.VersionID,
			OrgID: ws.Org, WorkspaceID: ws.ID, WorkspaceAccess: access, CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy,
			ModifiedAt: h.ModifiedAt, ModifiedBy: h.ModifiedBy,
		}
		if o.deleted != nil {
			at := o.deleted.At
			it.DeletedAt, it.DeletedBy = &at, o.deleted.By
		}
		id, vid := o.id, o.versions[len(o.versions)-1]
		out = append(out, &candidate{item: it, doc: func() (map[string]any, error) {
			vf, err := s.readVersion(ws, id, vid)
			if err != nil {
				return nil, ErrStorage(err)
			}
			return objects.DecodeJSON(vf.Object)
		}})
	}
	return out
}

func paginate(cs []*candidate, limit, offset int) *Page {
	if limit <= 0 {
		limit = DefaultLimit
	}
	p := &Page{Total: len(cs), Limit: limit, Offset: offset, Items: []ListItem{}}
	for i := offset; i < len(cs) && i < offset+limit; i++ {
		p.Items = append(p.Items, cs[i].item)
	}
	return p
}

// ListOrgObjects implements Store: objects of every workspace of org the
// query's Access allows, filtered, ordered and paginated.
func (s *Embedded) ListOrgObjects(ctx context.Context, org string, q OrgQuery) (*Page, error) {
	if !objects.IsUUID(org) {
		return nil, ErrValidation("organisation id must be a UUID")
	}
	org = strings.ToLower(org)
	s.mu.Lock()
	var cs []*candidate
	for ws := range s.spaces {
		if ws.Org != org {
			continue
		}
		role := ""
		if q.Access != nil {
			r, ok := q.Access(ws.ID)
			if !ok {
				continue
			}
			role = r
		}
		cs = append(cs, s.candidates(ws, q.Deleted, role)...)
	}
	s.mu.Unlock()
	kept := cs[:0]
	for _, c := range cs {
		ok, err := matches(q.Filters, c)
		if err != nil {
			return nil, err
		}
		if ok {
			kept = append(kept, c)
		}
	}
	if err := sortCandidates(kept, q.Sort); err != nil {
		return nil, err
	}
	return paginate(kept, q.Limit, q.Offset), nil
}

// DeleteObject implements Store.
func (s *Embedded) DeleteObject(ctx context.Context, ws Workspace, ref Ref, by User) error {
	if err := checkWorkspace(ws); err != nil {
		return err
	}
	ws = normWorkspace(ws)
	ref.Deleted = false
	s.mu.Lock()
	defer s.mu.Unlock()
	o, err := s.lookup(ws, ref)
	if err != nil {
		return err
	}
	d := &deletion{At: s.now().UTC(), By: &by}
	data, err := json.Marshal(d)
	if err != nil {
		return ErrInternal(err)
	}
	if err := atomicfile.Write(filepath.Join(s.dir, "tmp"), filepath.Join(s.objectDir(ws, o.id), "deleted.json"), data, nil); err != nil {
		return writeError("writing the delete marker", err)
	}
	o.deleted = d
	delete(s.spaces[ws].byPath, pathKey(o.latest.Path))
	return nil
}

// maxRestoreSuffix bounds the " (n)" search of a restore.
const maxRestoreSuffix = 1000

// RestoreObject implements Store. When the object's path is free it is
// restored in place; otherwise a new version (same document) is written at
// the first free "name (n).json". Restoring a live object returns its latest
// version unchanged.
func (s *Embedded) RestoreObject(ctx context.Context, ws Workspace, id string, by User) (*Version, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	ws = normWorkspace(ws)
	s.mu.Lock()
	o, err := s.lookup(ws, Ref{ID: id, Deleted: true})
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	sp := s.spaces[ws]
	if o.deleted != nil {
		if err := s.restoreLocked(ws, sp, o, by); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	s.mu.Unlock()
	return s.GetObject(ctx, ws, Ref{ID: o.id})
}

func (s *Embedded) restoreLocked(ws Workspace, sp *space, o *object, by User) error {
	path := o.latest.Path
	if sp.byPath[pathKey(path)] != nil {
		free := ""
		for n := 1; n <= maxRestoreSuffix; n++ {
			if p := suffixedPath(path, n); sp.byPath[pathKey(p)] == nil {
				free = p
				break
			}
		}
		if free == "" {
			return ErrInternal(fmt.Errorf("restore cannot find a free name for %q: maximum sequence for automatic rename reached", path))
		}
		vf, err := s.readVersion(ws, o.id, o.versions[len(o.versions)-1])
		if err != nil {
			return ErrStorage(err)
		}
		vid := max(s.now().UnixNano(), s.lastVID+1, o.versions[len(o.versions)-1]+1)
		hdr := vf.versionHeader
		hdr.Path, hdr.VersionID = free, strconv.FormatInt(vid, 10)
		hdr.ModifiedAt, hdr.ModifiedBy = time.Unix(0, vid).UTC(), &by
		if err := s.commitVersion(ws, hdr, vf.Object); err != nil {
			return err
		}
		o.versions = append(o.versions, vid)
		o.latest = hdr
		s.lastVID = vid
	}
	if err := atomicfile.Remove(filepath.Join(s.objectDir(ws, o.id), "deleted.json")); err != nil {
		return ErrStorage(err)
	}
	o.deleted = nil
	sp.byPath[pathKey(o.latest.Path)] = o
	return nil
}

// LatestVersions implements Store.
func (s *Embedded) LatestVersions(ctx context.Context, ws Workspace, ids []string) ([]LatestVersion, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	ws = normWorkspace(ws)
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.spaces[ws]
	out := make([]LatestVersion, len(ids))
	for i, id := range ids {
		out[i].ObjectID = id
		if sp == nil {
			continue
		}
		if o := sp.objects[strings.ToLower(id)]; o != nil && o.deleted == nil {
			out[i].VersionID = o.latest.VersionID
		}
	}
	return out, nil
}
