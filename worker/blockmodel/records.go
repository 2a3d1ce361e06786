package blockmodel

import (
	"encoding/json"
	"time"
)

// FullUser is the full user record of the block model area (A.3.2): id
// required, the rest optional. RoleName is a list (the client also accepts
// a single string).
type FullUser struct {
	ID         string     `json:"id"`
	Email      *string    `json:"email,omitempty"`
	FirstName  *string    `json:"first_name,omitempty"`
	LastName   *string    `json:"last_name,omitempty"`
	Name       *string    `json:"name,omitempty"`
	OrgID      *string    `json:"org_id,omitempty"`
	OrgName    *string    `json:"org_name,omitempty"`
	GroupIDs   []string   `json:"group_ids,omitempty"`
	GroupNames []string   `json:"group_names,omitempty"`
	RoleName   StringList `json:"role_name,omitempty"`
}

// Record is the block model record (A.3.1), returned by create, get, list,
// metadata update and restore. JobURL is set in the create response only.
type Record struct {
	BMUUID                    string         `json:"bm_uuid"`
	Name                      string         `json:"name"`
	Description               *string        `json:"description"`
	OrgUUID                   string         `json:"org_uuid"`
	WorkspaceID               string         `json:"workspace_id"`
	ModelOrigin               XYZ            `json:"model_origin"`
	BlockRotation             []RotationItem `json:"block_rotation"`
	NormalizedRotation        [3]float64     `json:"normalized_rotation"`
	SizeOptions               SizeOptions    `json:"size_options"`
	BBox                      BBox           `json:"bbox"`
	CoordinateReferenceSystem *string        `json:"coordinate_reference_system"`
	SizeUnitID                *string        `json:"size_unit_id"`
	FillSubblocks             bool           `json:"fill_subblocks"`
	GeoscienceObjectID        *string        `json:"geoscience_object_id"`
	CreatedAt                 time.Time      `json:"created_at"`
	CreatedBy                 FullUser       `json:"created_by"`
	LastUpdatedAt             time.Time      `json:"last_updated_at"`
	LastUpdatedBy             FullUser       `json:"last_updated_by"`
	JobURL                    string         `json:"job_url,omitempty"`
}

// SetGeometry fills the geometry members of the record (model_origin,
// block_rotation, normalized_rotation, size_options, bbox) from g.
func (r *Record) SetGeometry(g *Geometry) {
	r.ModelOrigin = g.Origin()
	r.BlockRotation = g.BlockRotation()
	r.NormalizedRotation = g.NormalizedRotation()
	r.SizeOptions = g.SizeOptions()
	r.BBox = g.BBox()
}

// Geometry returns the validated geometry of the record's members.
func (r *Record) Geometry() (*Geometry, error) {
	return NewGeometry(r.ModelOrigin, r.BlockRotation, r.SizeOptions)
}

// Column is a column record of a version's mapping (A.4.2): user columns
// have a UUID col_id, system columns their title (OPEN-9). Tags is free
// JSON stored verbatim; a ListingColumn leaves it out.
type Column struct {
	ColID     string          `json:"col_id"`
	Title     string          `json:"title"`
	DataType  DataType        `json:"data_type"`
	UnitID    *string         `json:"unit_id"`
	GroupUUID *string         `json:"group_uuid"`
	Tags      json.RawMessage `json:"tags,omitempty"`
}

// SystemColumnRecords returns the column records of a kind's system
// columns, col_id = title.
func SystemColumnRecords(t ModelType) []Column {
	sys := SystemColumns(t)
	out := make([]Column, len(sys))
	for n, c := range sys {
		out[n] = Column{ColID: c.Title, Title: c.Title, DataType: c.DataType}
	}
	return out
}

// IndexMinMax is a closed integer interval {min, max}.
type IndexMinMax struct {
	Min int64 `json:"min"`
	Max int64 `json:"max"`
}

// IJKBox is a parent-index box {i_minmax, j_minmax, k_minmax}, the bbox of
// a version record.
type IJKBox struct {
	IMinMax IndexMinMax `json:"i_minmax"`
	JMinMax IndexMinMax `json:"j_minmax"`
	KMinMax IndexMinMax `json:"k_minmax"`
}

// NewIJKBox returns the box from lo to hi (inclusive) along i, j, k.
func NewIJKBox(lo, hi [3]int64) IJKBox {
	return IJKBox{IndexMinMax{lo[0], hi[0]}, IndexMinMax{lo[1], hi[1]}, IndexMinMax{lo[2], hi[2]}}
}

// Axes returns the intervals along i, j, k, to read or set in a loop over
// the axes.
func (b *IJKBox) Axes() [3]*IndexMinMax { return [3]*IndexMinMax{&b.IMinMax, &b.JMinMax, &b.KMinMax} }

// Mapping is the column list of a version: every column, system ones
// included. Groups is always empty in this engine.
type Mapping struct {
	Columns []Column          `json:"columns"`
	Groups  []json.RawMessage `json:"groups"`
}

// Version is the version record (A.5).
type Version struct {
	VersionID           int64     `json:"version_id"`
	VersionUUID         string    `json:"version_uuid"`
	ParentVersionID     int64     `json:"parent_version_id"`
	BaseVersionID       *int64    `json:"base_version_id"`
	BMUUID              string    `json:"bm_uuid"`
	Comment             string    `json:"comment"`
	CreatedAt           time.Time `json:"created_at"`
	CreatedBy           FullUser  `json:"created_by"`
	BBox                *IJKBox   `json:"bbox"`
	GeoscienceVersionID *string   `json:"geoscience_version_id"`
	Mapping             Mapping   `json:"mapping"`
	Changes             *Changes  `json:"changes,omitempty"`
}

// Changes is what a version changed, added to the single-version record
// with include_changes=true.
type Changes struct {
	BlocksUploaded *int64        `json:"blocks_uploaded"`
	TotalBlocks    int64         `json:"total_blocks"`
	UpdateType     *string       `json:"update_type"`
	Columns        ColumnChanges `json:"columns"`
}

// ColumnChanges lists the columns a version changed, by title.
type ColumnChanges struct {
	New             []string         `json:"new"`
	Deleted         []string         `json:"deleted"`
	Updated         []string         `json:"updated"`
	Renamed         []Renamed        `json:"renamed"`
	MetadataUpdated []MetadataChange `json:"metadata_updated"`
}

// Renamed is one rename of a version.
type Renamed struct {
	OldTitle string `json:"old_title"`
	NewTitle string `json:"new_title"`
}

// MetadataChange is one column-metadata edit of a version: the column's
// title and the new values of the edited members.
type MetadataChange struct {
	Title  string          `json:"title"`
	Values json.RawMessage `json:"values"`
}
