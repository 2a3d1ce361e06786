package bmstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/internal/atomicfile"
)

// MinMax is an inclusive integer range.
type MinMax struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// BBox is a parent-index box (A.5 `bbox`).
type BBox struct {
	I MinMax `json:"i_minmax"`
	J MinMax `json:"j_minmax"`
	K MinMax `json:"k_minmax"`
}

// Intersects reports whether two boxes overlap.
func (b BBox) Intersects(o BBox) bool {
	ov := func(a, c MinMax) bool { return a.Min <= c.Max && c.Min <= a.Max }
	return ov(b.I, o.I) && ov(b.J, o.J) && ov(b.K, o.K)
}

// ColumnMeta is one stored column of a version. Internal columns (the
// caller's sub-block identity) are stored like user columns but flagged.
type ColumnMeta struct {
	ColID    string          `json:"col_id"`
	Title    string          `json:"title"`
	DataType DataType        `json:"data_type"`
	UnitID   *string         `json:"unit_id"`
	Tags     json.RawMessage `json:"tags,omitempty"`
	Internal bool            `json:"internal,omitempty"`
	// File is the column file (under the model's c/ directory).
	File string `json:"file"`
}

// Renamed is one rename of a version's changes.
type Renamed struct {
	OldTitle string `json:"old_title"`
	NewTitle string `json:"new_title"`
}

// MetaUpdated is one column-metadata edit of a version's changes.
type MetaUpdated struct {
	Title  string         `json:"title"`
	Values map[string]any `json:"values"`
}

// Changes is what a version changed (A.5 `changes.columns`, titles), plus
// the col_ids the delta check needs.
type Changes struct {
	New             []string      `json:"new"`
	Deleted         []string      `json:"deleted"`
	Updated         []string      `json:"updated"`
	Renamed         []Renamed     `json:"renamed"`
	MetadataUpdated []MetaUpdated `json:"metadata_updated"`
	NewIDs          []string      `json:"new_ids"`
	DeletedIDs      []string      `json:"deleted_ids"`
	UpdatedIDs      []string      `json:"updated_ids"`
	BlocksUploaded  *int64        `json:"blocks_uploaded"`
	UpdateType      *string       `json:"update_type"`
}

// Version is the immutable manifest of one version.
type Version struct {
	VersionID       int          `json:"version_id"`
	VersionUUID     string       `json:"version_uuid"`
	ParentVersionID int          `json:"parent_version_id"`
	BaseVersionID   *int         `json:"base_version_id"`
	CreatedAt       time.Time    `json:"created_at"`
	CreatedBy       string       `json:"created_by"`
	Comment         string       `json:"comment"`
	BBox            *BBox        `json:"bbox"`
	Rows            int64        `json:"rows"`
	Columns         []ColumnMeta `json:"columns"`
	Changes         Changes      `json:"changes"`
	// VersionIDFile holds the per-row version_id column; when empty every
	// row has VersionIDConst.
	VersionIDFile  string `json:"version_id_file,omitempty"`
	VersionIDConst int64  `json:"version_id_const,omitempty"`
}

// UserColumns returns the version's user columns (internal ones left out).
func (v *Version) UserColumns() []ColumnMeta {
	var out []ColumnMeta
	for _, c := range v.Columns {
		if !c.Internal {
			out = append(out, c)
		}
	}
	return out
}

// Column returns the column with the given col_id or title (titles compared
// case-insensitively).
func (v *Version) Column(idOrTitle string) (ColumnMeta, bool) {
	for _, c := range v.Columns {
		if c.ColID == idOrTitle || strings.EqualFold(c.Title, idOrTitle) {
			return c, true
		}
	}
	return ColumnMeta{}, false
}

// Meta is the caller's part of a new version's record.
type Meta struct {
	CreatedBy      string
	Comment        string
	BBox           *BBox
	CreatedAt      time.Time // zero: now
	BlocksUploaded *int64
	UpdateType     *string
	// VersionUUID is the new version's uuid (empty: a fresh one), so that
	// an update job's version gets the uuid reserved when it was started.
	VersionUUID string
}

// Tx is an open change to one model: it holds the model's lock until Commit
// or Abort. Column data are streamed to files in the model's tmp directory
// and made visible only by Commit.
type Tx struct {
	s       *Store
	id      string
	lock    interface{ Unlock() }
	base    *Version // nil for create
	rows    int64
	cols    []ColumnMeta
	changes Changes
	written []uint64 // bitset of rows given by any written column
	anyRow  bool
	files   map[string]string // final name → tmp path
	open    *ColumnWriter
	done    bool
	model   *Model
}

// Create starts version 1 of a new model with rows rows. Add the internal
// columns with AddColumn(..., internal=true), then Commit.
func (s *Store) Create(m Model, rows int64) (*Tx, error) {
	if err := validID(m.ID); err != nil {
		return nil, err
	}
	if rows < 0 {
		return nil, fmt.Errorf("bmstore: create %s: negative row count", m.ID)
	}
	l := s.lock(m.ID)
	l.Lock()
	if _, err := s.latest(m.ID); err == nil {
		l.Unlock()
		return nil, fmt.Errorf("bmstore: create %s: model exists", m.ID)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now().UTC()
	}
	os.RemoveAll(s.modelDir(m.ID))
	return &Tx{s: s, id: m.ID, lock: l, rows: rows, files: map[string]string{}, model: &m}, nil
}

// Begin starts a change to the latest version of a model, waiting for any
// other open change of the model to finish.
func (s *Store) Begin(id string) (*Tx, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	l := s.lock(id)
	l.Lock()
	n, err := s.latest(id)
	if err == nil {
		var base *Version
		if base, err = s.manifest(id, n); err == nil {
			return &Tx{s: s, id: id, lock: l, base: base, rows: base.Rows,
				cols: append([]ColumnMeta(nil), base.Columns...), files: map[string]string{}}, nil
		}
	}
	l.Unlock()
	return nil, err
}

// Base returns the version the change applies to (nil for a create).
func (t *Tx) Base() *Version { return t.base }

// Rows is the model's row count.
func (t *Tx) Rows() int64 { return t.rows }

func (t *Tx) next() int {
	if t.base == nil {
		return 1
	}
	return t.base.VersionID + 1
}

func (t *Tx) find(colID string) int {
	for i, c := range t.cols {
		if c.ColID == colID {
			return i
		}
	}
	return -1
}

func (t *Tx) usable() error {
	if t.done {
		return errors.New("bmstore: change already committed or aborted")
	}
	if t.open != nil {
		return errors.New("bmstore: a column writer is still open")
	}
	return nil
}

// SetRows changes the row count (a geometry-change update): every column
// must then be rewritten or deleted before Commit.
func (t *Tx) SetRows(n int64) error {
	if err := t.usable(); err != nil {
		return err
	}
	if n < 0 {
		return errors.New("bmstore: negative row count")
	}
	t.rows = n
	t.written = nil
	return nil
}

// AddColumn starts a new column (a fresh col_id when spec.ColID is empty):
// write its N rows in order to the returned writer and Close it.
func (t *Tx) AddColumn(spec ColumnMeta) (*ColumnWriter, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	if !spec.DataType.Valid() {
		return nil, fmt.Errorf("bmstore: column %q: unknown data_type %q", spec.Title, spec.DataType)
	}
	if spec.Title == "" || strings.EqualFold(spec.Title, VersionIDColumn) {
		return nil, fmt.Errorf("bmstore: invalid column title %q", spec.Title)
	}
	for _, c := range t.cols {
		if strings.EqualFold(c.Title, spec.Title) {
			return nil, fmt.Errorf("bmstore: column title %q already used", spec.Title)
		}
	}
	if spec.ColID == "" {
		spec.ColID = NewUUID()
	}
	if validID(spec.ColID) != nil || t.find(spec.ColID) >= 0 {
		return nil, fmt.Errorf("bmstore: invalid or duplicate col_id %q", spec.ColID)
	}
	return t.newWriter(spec, nil, false, true)
}

// UpdateColumn starts new data for an existing column: write N rows in
// order; rows whose batch Given flag is false keep their value (merge) or
// become null (replace).
func (t *Tx) UpdateColumn(colID string, replace bool) (*ColumnWriter, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	i := t.find(colID)
	if i < 0 {
		return nil, fmt.Errorf("bmstore: update column %s: %w", colID, ErrNotFound)
	}
	var old *colReader
	if !replace && t.base != nil && t.base.Rows == t.rows {
		var err error
		if old, err = openColReader(t.s.colPath(t.id, t.cols[i].File), t.cols[i].DataType); err != nil {
			return nil, err
		}
	}
	return t.newWriter(t.cols[i], old, replace, false)
}

// DeleteColumn removes a column from the new version.
func (t *Tx) DeleteColumn(colID string) error {
	if err := t.usable(); err != nil {
		return err
	}
	i := t.find(colID)
	if i < 0 {
		return fmt.Errorf("bmstore: delete column %s: %w", colID, ErrNotFound)
	}
	if !t.cols[i].Internal {
		t.changes.Deleted = append(t.changes.Deleted, t.cols[i].Title)
		t.changes.DeletedIDs = append(t.changes.DeletedIDs, colID)
	}
	t.cols = append(t.cols[:i], t.cols[i+1:]...)
	return nil
}

// Rename gives a column a new title; its col_id stays.
func (t *Tx) Rename(colID, title string) error {
	if err := t.usable(); err != nil {
		return err
	}
	i := t.find(colID)
	if i < 0 {
		return fmt.Errorf("bmstore: rename column %s: %w", colID, ErrNotFound)
	}
	for j, c := range t.cols {
		if j != i && strings.EqualFold(c.Title, title) {
			return fmt.Errorf("bmstore: column title %q already used", title)
		}
	}
	if title == "" || strings.EqualFold(title, VersionIDColumn) {
		return fmt.Errorf("bmstore: invalid column title %q", title)
	}
	t.changes.Renamed = append(t.changes.Renamed, Renamed{OldTitle: t.cols[i].Title, NewTitle: title})
	t.cols[i].Title = title
	return nil
}

// SetColumnMeta edits a column's unit and tags (nil leaves one unchanged).
func (t *Tx) SetColumnMeta(colID string, unitID *string, tags json.RawMessage) error {
	if err := t.usable(); err != nil {
		return err
	}
	i := t.find(colID)
	if i < 0 {
		return fmt.Errorf("bmstore: column %s: %w", colID, ErrNotFound)
	}
	vals := map[string]any{}
	if unitID != nil {
		t.cols[i].UnitID = unitID
		vals["unit_id"] = *unitID
	}
	if tags != nil {
		t.cols[i].Tags = tags
		vals["tags"] = tags
	}
	t.changes.MetadataUpdated = append(t.changes.MetadataUpdated, MetaUpdated{Title: t.cols[i].Title, Values: vals})
	return nil
}

// ClearUnit removes a column's unit (update_metadata with unit_id null).
func (t *Tx) ClearUnit(colID string) error {
	if err := t.usable(); err != nil {
		return err
	}
	i := t.find(colID)
	if i < 0 {
		return fmt.Errorf("bmstore: column %s: %w", colID, ErrNotFound)
	}
	t.cols[i].UnitID = nil
	t.changes.MetadataUpdated = append(t.changes.MetadataUpdated, MetaUpdated{Title: t.cols[i].Title, Values: map[string]any{"unit_id": nil}})
	return nil
}

// Abort drops the change: its files are removed and the lock released.
func (t *Tx) Abort() {
	if t.done {
		return
	}
	if t.open != nil {
		t.open.abort()
	}
	for _, p := range t.files {
		os.Remove(p)
	}
	t.done = true
	t.lock.Unlock()
}

// Commit makes the change the model's latest version and returns it. On
// error nothing is visible and the model is as it was.
func (t *Tx) Commit(meta Meta) (*Version, error) {
	if err := t.usable(); err != nil {
		return nil, err
	}
	defer t.Abort()
	n := t.next()
	dir := t.s.modelDir(t.id)
	for _, c := range t.cols {
		if t.base != nil && t.rows != t.base.Rows {
			if _, ok := t.files[c.File]; !ok {
				return nil, fmt.Errorf("bmstore: row count changed but column %q was not rewritten", c.Title)
			}
		}
	}
	if meta.VersionUUID == "" {
		meta.VersionUUID = NewUUID()
	}
	v := &Version{VersionID: n, VersionUUID: meta.VersionUUID, CreatedBy: meta.CreatedBy, Comment: meta.Comment,
		BBox: meta.BBox, Rows: t.rows, Columns: t.cols, Changes: t.changes, CreatedAt: meta.CreatedAt}
	if v.CreatedAt.IsZero() {
		v.CreatedAt = time.Now().UTC()
	}
	v.Changes.BlocksUploaded, v.Changes.UpdateType = meta.BlocksUploaded, meta.UpdateType
	if t.base != nil {
		v.ParentVersionID = t.base.VersionID
		b := t.base.VersionID
		v.BaseVersionID = &b
	}
	// version_id per row.
	// A new model, a geometry change (every column rewritten) or a change
	// that wrote every row: one constant.
	switch {
	case t.base == nil || t.rows != t.base.Rows || (t.anyRow && allSet(t.written, t.rows)):
		v.VersionIDConst = int64(n)
	case !t.anyRow:
		v.VersionIDFile, v.VersionIDConst = t.base.VersionIDFile, t.base.VersionIDConst
	default:
		if err := t.writeVersionIDs(v); err != nil {
			return nil, err
		}
	}
	t.s.hook("columns")
	for final, tmp := range t.files {
		if err := os.Rename(tmp, t.s.colPath(t.id, final)); err != nil {
			return nil, fmt.Errorf("bmstore: commit: %w", err)
		}
	}
	if len(t.files) > 0 {
		if err := atomicfile.SyncDir(filepath.Join(dir, "c")); err != nil {
			return nil, err
		}
	}
	t.files = nil
	t.s.hook("manifest")
	tmp := filepath.Join(dir, "tmp")
	if err := writeJSON(tmp, filepath.Join(dir, "v", strconv.Itoa(n)+".json"), v, nil); err != nil {
		return nil, fmt.Errorf("bmstore: commit manifest: %w", err)
	}
	if t.model != nil {
		if err := writeJSON(tmp, filepath.Join(dir, "model.json"), t.model, nil); err != nil {
			return nil, fmt.Errorf("bmstore: commit model: %w", err)
		}
	}
	t.s.hook("latest")
	if err := writeJSON(tmp, filepath.Join(dir, "latest"), latestPtr{Version: n}, nil); err != nil {
		return nil, fmt.Errorf("bmstore: commit pointer: %w", err)
	}
	t.s.hook("done")
	return v, nil
}

func allSet(bits []uint64, n int64) bool {
	if bits == nil {
		return false
	}
	for r := int64(0); r < n; r++ {
		if bits[r>>6]&(1<<(r&63)) == 0 {
			return false
		}
	}
	return true
}

// writeVersionIDs writes the merged per-row version_id column of v.
func (t *Tx) writeVersionIDs(v *Version) error {
	name := fmt.Sprintf("%d-%s.parquet", v.VersionID, VersionIDColumn)
	cw, err := t.newFileWriter(name, blockmodel.Int64)
	if err != nil {
		return err
	}
	var old *colReader
	if t.base.VersionIDFile != "" {
		if old, err = openColReader(t.s.colPath(t.id, t.base.VersionIDFile), blockmodel.Int64); err != nil {
			cw.abort()
			return err
		}
		defer old.close()
	}
	batch := newColumn(blockmodel.Int64, batchRows)
	for lo := int64(0); lo < t.rows; lo += batchRows {
		hi := min(t.rows, lo+batchRows)
		batch.Reset()
		if old != nil {
			if k, err := old.read(&batch, int(hi-lo)); err != nil || int64(k) != hi-lo {
				cw.abort()
				return fmt.Errorf("bmstore: read version_id: %v (%d rows)", err, k)
			}
		} else {
			for r := lo; r < hi; r++ {
				batch.Ints = append(batch.Ints, t.base.VersionIDConst)
				batch.Null = append(batch.Null, false)
			}
		}
		for r := lo; r < hi; r++ {
			if t.written[r>>6]&(1<<(r&63)) != 0 {
				batch.Ints[r-lo] = int64(v.VersionID)
			}
		}
		if err := cw.tw.write([]*Column{&batch}); err != nil {
			cw.abort()
			return err
		}
	}
	if err := cw.finish(); err != nil {
		return err
	}
	v.VersionIDFile = name
	return nil
}

func (s *Store) colPath(id, file string) string { return filepath.Join(s.modelDir(id), "c", file) }

// batchRows is the row batch of internal streaming.
const batchRows = 100_000
