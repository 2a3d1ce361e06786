package bmjob

import (
	"errors"
	"io"
	"time"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// Internal columns of a sub-blocked version: the identity of each row in
// canonical order, the flat parent index and the sub-cell corners. A version
// without them has every parent whole. The titles are refused as user titles
// by blockmodel.ValidateTitle (they contain ':'), so they never collide with
// a user column.
const (
	ColParent  = "sys:parent"
	ColStartSI = "sys:start_si"
	ColStartSJ = "sys:start_sj"
	ColStartSK = "sys:start_sk"
	ColEndSI   = "sys:end_si"
	ColEndSJ   = "sys:end_sj"
	ColEndSK   = "sys:end_sk"
)

// ColFilled is the internal column (Int64) that records which rows a
// geometry change with fill_subblocks filled from their parent's previous
// values, for the query column sub_block_derivation (A.4.1): 0 for a row
// whose values were given, the version that filled the row, or −1 for a
// row some of whose values were given and others filled. A query derives
// from it and the row's version_id: 0 "user specified"; the row's
// version_id (nothing written since) "derived from parent"; −1 or an older
// version (an update wrote some values since) "some columns derived".
// Versions without it have every row "user specified". It is not one of
// InternalColumns (the row identity).
const ColFilled = "sys:filled"

// InternalColumns returns the internal column titles in their order:
// ColParent (UInt32), then the start and end corners (UInt8).
func InternalColumns() []string {
	return []string{ColParent, ColStartSI, ColStartSJ, ColStartSK, ColEndSI, ColEndSJ, ColEndSK}
}

// Errors of this package, tested with errors.Is.
var (
	// ErrNoFile: the update needs a file (new or update columns) and none
	// was uploaded (the FAILED job's …/job/file-not-found).
	ErrNoFile = errors.New("the update needs a file and none was uploaded")
	// ErrNotContinuous: ReadFloat64 of a column that is not Int*, UInt* or
	// Float* (A.14.3 step 4).
	ErrNotContinuous = errors.New("not a continuous column")
	// ErrNotCategorical: ReadCategories of a column that is not Utf8 or
	// Boolean.
	ErrNotCategorical = errors.New("not a category column (Utf8 or Boolean)")
	// ErrColumnNotFound: a column named by a task does not exist in the
	// version.
	ErrColumnNotFound = errors.New("no such column")
	// ErrColumnType: a task's update target is not Float64 or Float32, or a
	// create target exists with another type (A.14.3 step 6).
	ErrColumnType = errors.New("the column is not Float64 or Float32")
	// ErrGeometryChanged: the latest version's rows differ from those a
	// task computed on (A.14.5 step 3); nothing was written.
	ErrGeometryChanged = errors.New("block model geometry changed")
)

// ModelInfo is what bmwire's request checks need to know about a version
// of a model: its kind, parent counts and user columns (internal columns
// left out).
func ModelInfo(g *blockmodel.Geometry, v *bmstore.Version) bmwire.ModelInfo {
	info := bmwire.ModelInfo{Kind: g.Type(), N: g.Parents()}
	for _, c := range v.UserColumns() {
		info.Columns = append(info.Columns, ColumnRecord(c))
	}
	return info
}

// ColumnRecord is the column record (A.4.2) of a stored user column.
func ColumnRecord(c bmstore.ColumnMeta) blockmodel.Column {
	return blockmodel.Column{ColID: c.ColID, Title: c.Title, DataType: c.DataType, UnitID: c.UnitID, Tags: c.Tags}
}

// UpdateInput is an update job to apply (A.7.3).
type UpdateInput struct {
	// ModelID is the model's id in the store.
	ModelID string
	// Geometry is the model's geometry.
	Geometry *blockmodel.Geometry
	// Update is the decoded request (bmwire.DecodeUpdate). It was checked
	// against the version latest when the job was started; ApplyUpdate
	// checks its titles again against the latest version at processing
	// time.
	Update *bmwire.Update
	// File is the uploaded update file of FileSize bytes; when nil,
	// FilePath names it instead. Neither is needed when the update reads no
	// file (Update.NeedsFile false).
	File     io.ReaderAt
	FileSize int64
	FilePath string
	// ModelFillSubblocks is the model's fill_subblocks, the default when
	// Update.FillSubblocks is nil.
	ModelFillSubblocks bool
	// VersionUUID is the uuid reserved for the new version when the job was
	// started (A.7.1 version_uuid, OPEN-20); empty: a fresh one.
	VersionUUID string
	// CreatedBy is the id of the user the version is recorded for.
	CreatedBy string
	// CreatedAt is the version's time (zero: now).
	CreatedAt time.Time
	// BatchRows is the row batch of reading and writing (0: a default).
	BatchRows int
	// FileRows, when positive, is FileRowBound of the file, read by the
	// caller already (the file is immutable); ApplyUpdate reads it
	// otherwise.
	FileRows int64
	// MaxMemory, when positive, bounds the memory estimate of a geometry
	// change (UpdateMemory, with the new rows counted once the file is
	// read): a change past it fails with a *blockmodel.ValidationError
	// before its rows are loaded.
	MaxMemory int64
}

// QueryResult describes a query output Query wrote.
type QueryResult struct {
	// Rows is the number of data rows written.
	Rows int64
	// Headers are the output's column headers, in order: the geometry
	// columns, then the resolved columns (titles or col_ids of user
	// columns per column_headers).
	Headers []string
	// Columns are the resolved columns after the geometry columns, as
	// titles and system names (bmwire.Query.ResolveColumns).
	Columns []string
}

// Categories is a Utf8 or Boolean column read as a category attribute:
// a key per row (Valid false for nulls) and the lookup table from key to
// category name. Utf8 keys number the distinct values in order of first
// appearance, from 0; Boolean keys are 0 (name "false") and 1 ("true"), so
// a filter comparing Booleans as 1/0 can use Keys directly.
type Categories struct {
	Keys  []int64
	Valid []bool
	Names map[int64]string
}

// Target operations of a task result (A.14.1).
const (
	OpCreate = "create"
	OpUpdate = "update"
)

// ColumnWrite is one task result column to write (A.14.5).
type ColumnWrite struct {
	// ModelID is the model's id in the store.
	ModelID string
	// Rows are the rows the task computed on (Rows of the version it read);
	// the write fails with ErrGeometryChanged when the latest version's
	// rows differ.
	Rows *blockmodel.Blocks
	// Operation is OpCreate or OpUpdate.
	Operation string
	// Title is the column's title (create: the new name; update: the
	// existing column).
	Title string
	// Values holds one value per row, in canonical order; NaN is null.
	Values []float64
	// Selected, when non-nil, is the task's target filter (one flag per
	// row). With OpCreate, or OpUpdate and no filter, every row is written
	// and unselected rows become null (replace); with OpUpdate and a filter
	// only the selected rows are written (merge).
	Selected []bool
	// Comment is the version comment; CreatedBy the user it is recorded for.
	Comment   string
	CreatedBy string
	// BatchRows is the row batch of writing (0: a default).
	BatchRows int
}
