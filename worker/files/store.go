package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
	"github.com/geostat-engine/geostat/worker/internal/urlsign"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/store"
)

// Listing page sizes.
const (
	// DefaultListLimit is the page size of a listing without limit.
	DefaultListLimit = 100
	// MaxListLimit is the largest page size accepted.
	MaxListLimit = 5000
)

// Store keeps the versioned files of every workspace under DATA/files. It is
// safe for concurrent use; one mutex serialises metadata changes while
// content is streamed to temporary files outside it.
type Store struct {
	root string // DATA/files
	tmp  string // DATA/files/tmp
	urls *urlsign.Signer
	now  func() time.Time

	mu      sync.Mutex
	spaces  map[store.Workspace]*space
	lastVID int64 // the greatest version id issued
}

// space is the index of one workspace.
type space struct {
	files  map[string]*file // by id, deleted ones included
	byPath map[string]*file // by path key, live files only
}

// file is the in-memory state of one file.
type file struct {
	id       string
	ws       store.Workspace
	key      string         // pathKey of its path (it changes only in case)
	versions []*versionMeta // versions with content, ascending id
	pending  map[int64]*pendingMeta
	deleted  bool
}

// visible reports whether the file is listed and found.
func (f *file) visible() bool { return !f.deleted && len(f.versions) > 0 }

// versionMeta is a stored version, the content of v-<version>.json.
type versionMeta struct {
	FileID      string     `json:"file_id"`
	VersionID   string     `json:"version_id"`
	Path        string     `json:"path"`
	CreatedAt   time.Time  `json:"created_at"`
	CreatedBy   store.User `json:"created_by"`
	Size        int64      `json:"size"`
	ContentType string     `json:"content_type,omitempty"`
	SHA256      string     `json:"sha256"`
	vid         int64
}

// pendingMeta is a reserved version awaiting its content, the content of
// p-<version>.json.
type pendingMeta struct {
	FileID     string     `json:"file_id"`
	VersionID  string     `json:"version_id"`
	Path       string     `json:"path"`
	CreatedBy  store.User `json:"created_by"`
	ReservedAt time.Time  `json:"reserved_at"`
	Expires    time.Time  `json:"expires"`
	vid        int64
}

// deletedMeta is the soft-delete marker, deleted.json.
type deletedMeta struct {
	DeletedAt time.Time  `json:"deleted_at"`
	DeletedBy store.User `json:"deleted_by"`
}

// Record is the file record of one version (seed 2.8): id, name (the last
// path segment), path (without a leading slash), version_id, created_at (UTC,
// rendered RFC 3339 with a Z), created_by, size in bytes, content_type,
// download_url (set by the HTTP layer or with DownloadURL) and, when asked
// for, the file's versions newest first. Org and Workspace say where the file
// lives.
type Record struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Path        string        `json:"path"`
	VersionID   string        `json:"version_id"`
	CreatedAt   time.Time     `json:"created_at"`
	CreatedBy   store.User    `json:"created_by"`
	Size        int64         `json:"size"`
	ContentType string        `json:"content_type,omitempty"`
	DownloadURL string        `json:"download_url,omitempty"`
	Versions    []VersionInfo `json:"versions,omitempty"`
	Org         string        `json:"-"`
	Workspace   string        `json:"-"`
}

// VersionInfo describes one version of a file in Record.Versions.
type VersionInfo struct {
	VersionID string     `json:"version_id"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy store.User `json:"created_by"`
	Size      int64      `json:"size"`
}

// Page is a page of a listing: the records of the latest versions, ordered
// by path (case-insensitively), the number of live files in all (Total), and
// the limit and offset applied.
type Page struct {
	Files  []*Record `json:"files"`
	Total  int       `json:"total"`
	Limit  int       `json:"limit"`
	Offset int       `json:"offset"`
}

// Open opens (or creates) the file store in dataDir/files, the worker's data
// directory, and rebuilds its index. Leftovers of interrupted writes are
// removed: temporary files, content without a record, and reservations whose
// upload URL has expired.
func Open(dataDir string) (*Store, error) {
	if dataDir == "" {
		return nil, errors.New("files: Open needs a data directory")
	}
	root := filepath.Join(dataDir, "files")
	s := &Store{root: root, tmp: filepath.Join(root, "tmp"), now: time.Now, spaces: map[store.Workspace]*space{}}
	if err := os.RemoveAll(s.tmp); err != nil {
		return nil, fmt.Errorf("files: cleaning %s: %w", s.tmp, err)
	}
	for _, d := range []string{s.tmp, filepath.Join(root, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
	}
	urls, err := urlsign.Load(dataDir, s.now())
	if err != nil {
		return nil, fmt.Errorf("files: signing key: %w", err)
	}
	s.urls = urls
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("files: loading %s: %w", root, err)
	}
	return s, nil
}

// URLSigner returns the signer of the file content URLs, loaded from the
// data directory's key file by Open; the blob URLs of the same worker
// share it (server.Options.URLSigner).
func (s *Store) URLSigner() *urlsign.Signer { return s.urls }

// load rebuilds the index from data/<org>/<ws>/<file id>/.
func (s *Store) load() error {
	data := filepath.Join(s.root, "data")
	orgs, err := os.ReadDir(data)
	if err != nil {
		return err
	}
	for _, od := range orgs {
		if !objects.IsUUID(od.Name()) {
			continue
		}
		wss, err := os.ReadDir(filepath.Join(data, od.Name()))
		if err != nil {
			return err
		}
		for _, wd := range wss {
			if !objects.IsUUID(wd.Name()) {
				continue
			}
			ws := store.Workspace{Org: od.Name(), ID: wd.Name()}
			ids, err := os.ReadDir(filepath.Join(data, ws.Org, ws.ID))
			if err != nil {
				return err
			}
			for _, fd := range ids {
				if !objects.IsUUID(fd.Name()) {
					continue
				}
				if err := s.loadFile(ws, fd.Name()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *Store) loadFile(ws store.Workspace, id string) error {
	f := &file{id: id, ws: ws, pending: map[int64]*pendingMeta{}}
	dir := s.fileDir(f)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var contents []int64
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "deleted.json":
			f.deleted = true
		case strings.HasPrefix(name, "v-") && strings.HasSuffix(name, ".json"):
			var m versionMeta
			if err := readJSON(filepath.Join(dir, name), &m); err != nil {
				return err
			}
			if m.vid, err = parseVersionID(m.VersionID); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
			}
			f.versions = append(f.versions, &m)
		case strings.HasPrefix(name, "p-") && strings.HasSuffix(name, ".json"):
			var m pendingMeta
			if err := readJSON(filepath.Join(dir, name), &m); err != nil {
				return err
			}
			if m.vid, err = parseVersionID(m.VersionID); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
			}
			f.pending[m.vid] = &m
		case strings.HasPrefix(name, "c-"):
			if v, err := parseVersionID(name[2:]); err == nil {
				contents = append(contents, v)
			}
		}
	}
	slices.SortFunc(f.versions, func(a, b *versionMeta) int { return cmpInt64(a.vid, b.vid) })
	stored := map[int64]bool{}
	for _, v := range f.versions {
		stored[v.vid] = true
		s.lastVID = max(s.lastVID, v.vid)
	}
	now := s.now()
	for vid, p := range f.pending {
		s.lastVID = max(s.lastVID, vid)
		if stored[vid] || f.deleted || now.After(p.Expires) {
			// Committed (the reservation's removal was interrupted), or
			// no longer uploadable.
			os.Remove(filepath.Join(dir, pendingName(vid)))
			delete(f.pending, vid)
		}
	}
	for _, vid := range contents {
		if !stored[vid] {
			// Content renamed into place, record never written.
			os.Remove(filepath.Join(dir, contentName(vid)))
		}
	}
	sp := s.space(ws)
	if len(f.versions) == 0 && len(f.pending) == 0 && !f.deleted {
		os.Remove(dir) // nothing left of it (only succeeds when empty)
		return nil
	}
	f.key = pathKey(f.currentPath())
	sp.files[id] = f
	if !f.deleted {
		if other := sp.byPath[f.key]; other == nil || other.lastVID() < f.lastVID() {
			sp.byPath[f.key] = f
		}
	}
	return nil
}

// currentPath is the path of the latest stored version, else of the latest
// reservation.
func (f *file) currentPath() string {
	if n := len(f.versions); n > 0 {
		return f.versions[n-1].Path
	}
	var best *pendingMeta
	for _, p := range f.pending {
		if best == nil || p.vid > best.vid {
			best = p
		}
	}
	if best == nil {
		return ""
	}
	return best.Path
}

func (f *file) lastVID() int64 {
	var v int64
	if n := len(f.versions); n > 0 {
		v = f.versions[n-1].vid
	}
	for vid := range f.pending {
		v = max(v, vid)
	}
	return v
}

func (f *file) version(vid int64) *versionMeta {
	i, ok := slices.BinarySearchFunc(f.versions, vid, func(v *versionMeta, t int64) int { return cmpInt64(v.vid, t) })
	if !ok {
		return nil
	}
	return f.versions[i]
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func pendingName(vid int64) string { return "p-" + strconv.FormatInt(vid, 10) + ".json" }
func versionName(vid int64) string { return "v-" + strconv.FormatInt(vid, 10) + ".json" }
func contentName(vid int64) string { return "c-" + strconv.FormatInt(vid, 10) }

func (s *Store) fileDir(f *file) string {
	return filepath.Join(s.root, "data", f.ws.Org, f.ws.ID, f.id)
}

func (s *Store) space(ws store.Workspace) *space {
	sp := s.spaces[ws]
	if sp == nil {
		sp = &space{files: map[string]*file{}, byPath: map[string]*file{}}
		s.spaces[ws] = sp
	}
	return sp
}

// nextVID issues a version id: the current time in nanoseconds, or one more
// than the last id issued when the clock has not moved on.
func (s *Store) nextVID() int64 {
	s.lastVID = max(s.now().UnixNano(), s.lastVID+1)
	return s.lastVID
}

// parseVersionID reads a version id: a positive int64 in canonical decimal.
func parseVersionID(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || strconv.FormatInt(n, 10) != v {
		return 0, errValidation(fmt.Sprintf("version_id %q is not a positive 64-bit integer", v))
	}
	return n, nil
}

// workspace checks and lowercases an org and workspace id.
func workspace(org, ws string) (store.Workspace, error) {
	if !objects.IsUUID(org) {
		return store.Workspace{}, errValidation(fmt.Sprintf("org_id %q is not a UUID", org))
	}
	if !objects.IsUUID(ws) {
		return store.Workspace{}, errValidation(fmt.Sprintf("workspace_id %q is not a UUID", ws))
	}
	return store.Workspace{Org: strings.ToLower(org), ID: strings.ToLower(ws)}, nil
}

// fileRef is a file addressed by id or by path (exactly one).
type fileRef struct {
	id, path string
}

// resolve checks a reference: the id must be a UUID, the path valid.
func resolve(id, path string, checkWhitespace bool) (fileRef, error) {
	if id != "" {
		if !objects.IsUUID(id) {
			return fileRef{}, errValidation(fmt.Sprintf("file_id %q is not a UUID", id))
		}
		return fileRef{id: strings.ToLower(id)}, nil
	}
	p, err := normalizePath(path, checkWhitespace)
	if err != nil {
		return fileRef{}, err
	}
	return fileRef{path: p}, nil
}

// describe names a reference in error details.
func (r fileRef) describe() string {
	if r.id != "" {
		return "file " + r.id
	}
	return "file " + strconv.Quote(r.path)
}

// findLocked returns the live, visible file of a reference (404 otherwise).
func (s *Store) findLocked(ws store.Workspace, ref fileRef) (*file, error) {
	sp := s.spaces[ws]
	var f *file
	if sp != nil {
		if ref.id != "" {
			f = sp.files[ref.id]
		} else {
			f = sp.byPath[pathKey(ref.path)]
		}
	}
	if f == nil || !f.visible() {
		return nil, errNotFound(ref.describe() + " not found")
	}
	return f, nil
}

// recordLocked renders version v of f; withVersions adds the history.
func recordLocked(f *file, v *versionMeta, withVersions bool) *Record {
	rec := &Record{
		ID: f.id, Name: fileName(v.Path), Path: v.Path, VersionID: v.VersionID, CreatedAt: v.CreatedAt.UTC(),
		CreatedBy: v.CreatedBy, Size: v.Size, ContentType: v.ContentType, Org: f.ws.Org, Workspace: f.ws.ID,
	}
	if withVersions {
		rec.Versions = make([]VersionInfo, 0, len(f.versions))
		for i := len(f.versions) - 1; i >= 0; i-- {
			h := f.versions[i]
			rec.Versions = append(rec.Versions, VersionInfo{VersionID: h.VersionID, CreatedAt: h.CreatedAt.UTC(), CreatedBy: h.CreatedBy, Size: h.Size})
		}
	}
	return rec
}

// contentTypeFor is the content type stored with a version: the given one
// when it parses as a media type, else the name's extension's, else
// application/octet-stream.
func contentTypeFor(given, name string) string {
	if given != "" {
		if _, _, err := mime.ParseMediaType(given); err == nil {
			return given
		}
	}
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// commitLocked stores spooled content as version vid of f at path: the
// content is renamed into place first, then the record is written (the
// commit point). On failure nothing of the version remains.
func (s *Store) commitLocked(f *file, vid int64, path string, by store.User, content *spooled, contentType string) (*versionMeta, error) {
	dir := s.fileDir(f)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errInternal("creating the file directory", err)
	}
	cpath := filepath.Join(dir, contentName(vid))
	if err := os.Rename(content.path, cpath); err != nil {
		return nil, errInternal("storing the content", err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		os.Remove(cpath)
		return nil, errInternal("storing the content", err)
	}
	m := &versionMeta{
		FileID: f.id, VersionID: strconv.FormatInt(vid, 10), Path: path,
		CreatedAt: s.now().UTC().Truncate(time.Microsecond), CreatedBy: by, Size: content.size,
		ContentType: contentTypeFor(contentType, fileName(path)), SHA256: content.sha256, vid: vid,
	}
	data, err := json.Marshal(m)
	if err == nil {
		err = atomicfile.Write(s.tmp, filepath.Join(dir, versionName(vid)), data, nil)
	}
	if err != nil {
		os.Remove(cpath)
		return nil, errInternal("writing the version record", err)
	}
	i, _ := slices.BinarySearchFunc(f.versions, vid, func(v *versionMeta, t int64) int { return cmpInt64(v.vid, t) })
	f.versions = slices.Insert(f.versions, i, m)
	return m, nil
}

// Put stores content as a new version of the file at path in workspace ws of
// org, visible at once: a new file when no live file has the path (compared
// case-insensitively), else a new version of that file, recorded under path
// as given (case preserved). contentType may be empty (then it follows the
// name's extension). The whitespace-in-segments check is off, as for a
// request without the preview flag. The content is read to its end before
// anything becomes visible; on error (including ctx ending) nothing is kept.
// The record returned lists the file's versions, newest first.
func (s *Store) Put(ctx context.Context, org, ws, path string, content io.Reader, contentType string, by store.User) (*Record, error) {
	w, err := workspace(org, ws)
	if err != nil {
		return nil, err
	}
	ref, err := resolve("", path, false)
	if err != nil {
		return nil, err
	}
	sp, err := spool(ctx, s.tmp, content)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("files: put %s: %w", ref.path, ctx.Err())
		}
		return nil, errInternal(spoolStep("storing the content", err), err)
	}
	defer os.Remove(sp.path) // a no-op once renamed into place
	s.mu.Lock()
	defer s.mu.Unlock()
	space := s.space(w)
	f := space.byPath[pathKey(ref.path)]
	isNew := f == nil
	if isNew {
		f = &file{id: uuid.NewString(), ws: w, key: pathKey(ref.path), pending: map[int64]*pendingMeta{}}
	}
	m, err := s.commitLocked(f, s.nextVID(), ref.path, by, sp, contentType)
	if err != nil {
		if isNew {
			os.Remove(s.fileDir(f))
		}
		return nil, err
	}
	if isNew {
		space.files[f.id] = f
		space.byPath[f.key] = f
	}
	return recordLocked(f, m, true), nil
}

// Get returns the record of a version of a file, addressed by id (a UUID) or,
// when id is empty, by path, and its content, which the caller closes.
// version "" means the latest. Soft-deleted files and versions whose content
// was never uploaded are not found (an *Error with status 404). The record
// lists the file's versions; its DownloadURL is empty (see DownloadURL).
func (s *Store) Get(ctx context.Context, org, ws, id, path, version string) (*Record, io.ReadSeekCloser, error) {
	rec, err := s.stat(ctx, org, ws, id, path, version, false, true)
	if err != nil {
		return nil, nil, err
	}
	f, err := s.openContent(rec)
	if err != nil {
		return nil, nil, err
	}
	return rec, f, nil
}

// stat returns the record of a version.
func (s *Store) stat(ctx context.Context, org, ws, id, path, version string, checkWhitespace, withVersions bool) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	w, err := workspace(org, ws)
	if err != nil {
		return nil, err
	}
	ref, err := resolve(id, path, checkWhitespace)
	if err != nil {
		return nil, err
	}
	var vid int64
	if version != "" {
		if vid, err = parseVersionID(version); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.findLocked(w, ref)
	if err != nil {
		return nil, err
	}
	v := f.versions[len(f.versions)-1]
	if version != "" {
		if v = f.version(vid); v == nil {
			return nil, errNotFound(fmt.Sprintf("%s has no version %s", ref.describe(), version))
		}
	}
	return recordLocked(f, v, withVersions), nil
}

// openContent opens the content of a stored version. Content files are never
// removed once their record exists (soft delete keeps them), so this needs
// no lock.
func (s *Store) openContent(rec *Record) (*os.File, error) {
	vid, err := parseVersionID(rec.VersionID)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(s.root, "data", rec.Org, rec.Workspace, rec.ID, contentName(vid))
	f, err := os.Open(p)
	if err != nil {
		return nil, errInternal("opening the content", err)
	}
	return f, nil
}

// List returns a page of the live files of a workspace (their latest
// versions), ordered by path case-insensitively. limit 0 means
// DefaultListLimit; limit above MaxListLimit, or a negative limit or offset,
// is an *Error with status 422.
func (s *Store) List(ctx context.Context, org, ws string, limit, offset int) (*Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	w, err := workspace(org, ws)
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, errValidation(fmt.Sprintf("limit %d: want 1 to %d", limit, MaxListLimit))
	}
	if offset < 0 {
		return nil, errValidation(fmt.Sprintf("offset %d: want 0 or more", offset))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []*file
	if sp := s.spaces[w]; sp != nil {
		for _, f := range sp.byPath {
			if f.visible() {
				live = append(live, f)
			}
		}
	}
	slices.SortFunc(live, func(a, b *file) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	page := &Page{Files: []*Record{}, Total: len(live), Limit: limit, Offset: offset}
	for _, f := range live[min(offset, len(live)):min(offset+limit, len(live))] {
		page.Files = append(page.Files, recordLocked(f, f.versions[len(f.versions)-1], false))
	}
	return page, nil
}

// Delete soft-deletes a file addressed by id or, when id is empty, by path:
// it is no longer listed or found and its path is free again. Deleting a file
// that is not found is an *Error with status 404.
func (s *Store) Delete(ctx context.Context, org, ws, id, path string, by store.User) error {
	return s.delete(ctx, org, ws, id, path, by, false)
}

func (s *Store) delete(ctx context.Context, org, ws, id, path string, by store.User, checkWhitespace bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	w, err := workspace(org, ws)
	if err != nil {
		return err
	}
	ref, err := resolve(id, path, checkWhitespace)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.findLocked(w, ref)
	if err != nil {
		return err
	}
	data, err := json.Marshal(deletedMeta{DeletedAt: s.now().UTC(), DeletedBy: by})
	if err == nil {
		err = atomicfile.Write(s.tmp, filepath.Join(s.fileDir(f), "deleted.json"), data, nil)
	}
	if err != nil {
		return errInternal("writing the delete marker", err)
	}
	f.deleted = true
	for vid := range f.pending {
		os.Remove(filepath.Join(s.fileDir(f), pendingName(vid)))
		delete(f.pending, vid)
	}
	sp := s.spaces[w]
	if sp.byPath[f.key] == f {
		delete(sp.byPath, f.key)
	}
	return nil
}

// reserve issues a version of a file, by id (a live file) or by path (a new
// file when no live file has it), whose content is to be uploaded within ttl.
func (s *Store) reserve(ctx context.Context, org, ws, id, path string, by store.User, ttl time.Duration, checkWhitespace bool) (versionRef, error) {
	if err := ctx.Err(); err != nil {
		return versionRef{}, fmt.Errorf("files: %w", err)
	}
	w, err := workspace(org, ws)
	if err != nil {
		return versionRef{}, err
	}
	ref, err := resolve(id, path, checkWhitespace)
	if err != nil {
		return versionRef{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.space(w)
	var f *file
	isNew := false
	if ref.id != "" {
		if f = sp.files[ref.id]; f == nil || f.deleted {
			return versionRef{}, errNotFound(ref.describe() + " not found")
		}
		ref.path = f.currentPath()
	} else if f = sp.byPath[pathKey(ref.path)]; f == nil {
		isNew = true
		f = &file{id: uuid.NewString(), ws: w, key: pathKey(ref.path), pending: map[int64]*pendingMeta{}}
	}
	now := s.now()
	dir := s.fileDir(f)
	for vid, p := range f.pending {
		if now.After(p.Expires) {
			os.Remove(filepath.Join(dir, pendingName(vid)))
			delete(f.pending, vid)
		}
	}
	vid := s.nextVID()
	p := &pendingMeta{FileID: f.id, VersionID: strconv.FormatInt(vid, 10), Path: ref.path, CreatedBy: by,
		ReservedAt: now.UTC(), Expires: now.Add(ttl).UTC(), vid: vid}
	data, err := json.Marshal(p)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = atomicfile.Write(s.tmp, filepath.Join(dir, pendingName(vid)), data, nil)
	}
	if err != nil {
		if isNew {
			os.Remove(dir)
		}
		return versionRef{}, errInternal("writing the reservation", err)
	}
	f.pending[vid] = p
	if isNew {
		sp.files[f.id] = f
		sp.byPath[f.key] = f
	}
	return versionRef{org: w.Org, ws: w.ID, file: f.id, version: vid}, nil
}

// pendingLocked returns the file and reservation of ref (404 when the file is
// gone or the version was never reserved, 409 when its content is stored).
func (s *Store) pendingLocked(ref versionRef) (*file, *pendingMeta, error) {
	sp := s.spaces[store.Workspace{Org: ref.org, ID: ref.ws}]
	var f *file
	if sp != nil {
		f = sp.files[ref.file]
	}
	if f == nil || f.deleted {
		return nil, nil, errNotFound("file " + ref.file + " not found")
	}
	if f.version(ref.version) != nil {
		return nil, nil, errVersionExists(fmt.Sprintf("version %d of file %s is already uploaded; versions are immutable", ref.version, ref.file))
	}
	p := f.pending[ref.version]
	if p == nil {
		return nil, nil, errNotFound(fmt.Sprintf("file %s has no pending version %d", ref.file, ref.version))
	}
	return f, p, nil
}

// upload stores the content of a reserved version, which then becomes
// visible. The reservation is checked before and after the content is
// spooled, so concurrent uploads of one version store it once (409 for the
// others).
func (s *Store) upload(ctx context.Context, ref versionRef, content io.Reader, contentType string) (*Record, error) {
	s.mu.Lock()
	_, _, err := s.pendingLocked(ref)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	sp, err := spool(ctx, s.tmp, content)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("files: upload: %w", ctx.Err())
		}
		// A body over the size limit stays visible to the HTTP layer
		// (errors.As finds the *http.MaxBytesError through the chain).
		return nil, errInternal(spoolStep("file upload", err), err)
	}
	defer os.Remove(sp.path)
	s.mu.Lock()
	defer s.mu.Unlock()
	f, p, err := s.pendingLocked(ref)
	if err != nil {
		return nil, err
	}
	m, err := s.commitLocked(f, ref.version, p.Path, p.CreatedBy, sp, contentType)
	if err != nil {
		return nil, err
	}
	os.Remove(filepath.Join(s.fileDir(f), pendingName(ref.version))) // superseded by the record
	delete(f.pending, ref.version)
	return recordLocked(f, m, false), nil
}

// downloadable returns the record of a stored version of a live file.
func (s *Store) downloadable(ref versionRef) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp := s.spaces[store.Workspace{Org: ref.org, ID: ref.ws}]
	var f *file
	if sp != nil {
		f = sp.files[ref.file]
	}
	if f == nil || !f.visible() {
		return nil, errNotFound("file " + ref.file + " not found")
	}
	v := f.version(ref.version)
	if v == nil {
		return nil, errNotFound(fmt.Sprintf("file %s has no version %d", ref.file, ref.version))
	}
	return recordLocked(f, v, false), nil
}

// DownloadURL returns a signed URL, valid for ttl, that downloads rec's
// version from the worker at baseURL (scheme and host, e.g.
// http://127.0.0.1:8080). rec must come from this store; DownloadURL panics
// on a record without a valid version id.
func (s *Store) DownloadURL(baseURL string, rec *Record, ttl time.Duration) string {
	vid, err := parseVersionID(rec.VersionID)
	if err != nil {
		panic("files: DownloadURL: " + err.Error())
	}
	return s.signedURL(baseURL, opDownload, versionRef{org: rec.Org, ws: rec.Workspace, file: rec.ID, version: vid}, ttl)
}

// ViewURL returns a signed URL, valid for ttl, that shows one version of a
// file in a browser: the same content route as DownloadURL with op=view,
// served inline (no attachment) under a Content-Security-Policy that allows
// inline CSS and SVG and no scripts, plugins, frames or outside resources
// (ViewCSP). The file is given by org, workspace, file id and version id.
func (s *Store) ViewURL(baseURL, org, ws, id, versionID string, ttl time.Duration) (string, error) {
	vid, err := parseVersionID(versionID)
	if err != nil {
		return "", fmt.Errorf("files: view URL: %w", err)
	}
	return s.signedURL(baseURL, opView, versionRef{org: org, ws: ws, file: id, version: vid}, ttl), nil
}

// FileURL returns the API URL of a file (GET for its record, which needs a
// token), by id: baseURL/file/v2/orgs/{org}/workspaces/{ws}/files/{id}.
func FileURL(baseURL string, rec *Record) string {
	return strings.TrimSuffix(baseURL, "/") + "/file/v2/orgs/" + rec.Org + "/workspaces/" + rec.Workspace + "/files/" + rec.ID
}
