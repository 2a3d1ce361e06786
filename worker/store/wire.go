package store

import (
	"encoding/json"
	"time"
)

// VersionRecord is the JSON version record of seed 2.4, the body of object
// GET and POST responses.
type VersionRecord struct {
	CreatedAt                          time.Time       `json:"created_at"`
	CreatedBy                          *User           `json:"created_by"`
	DeletedAt                          *time.Time      `json:"deleted_at"`
	DeletedBy                          *User           `json:"deleted_by"`
	ETag                               string          `json:"etag"`
	GeoJSONBoundingBox                 json.RawMessage `json:"geojson_bounding_box"`
	GeoJSONBoundingBoxFromWorkspaceCRS bool            `json:"geojson_bounding_box_from_workspace_crs"`
	Links                              RecordLinks     `json:"links"`
	ModifiedAt                         time.Time       `json:"modified_at"`
	ModifiedBy                         *User           `json:"modified_by"`
	Object                             json.RawMessage `json:"object"`
	ObjectID                           *string         `json:"object_id"`
	ObjectPath                         *string         `json:"object_path"`
	Stage                              json.RawMessage `json:"stage"`
	VersionID                          string          `json:"version_id"`
	Versions                           []VersionInfo   `json:"versions,omitempty"`
}

// RecordLinks are the links of a version record: the object's URL and a
// download link per referenced blob.
type RecordLinks struct {
	Data     []DataLink `json:"data"`
	Download string     `json:"download"`
}

var jsonNull = json.RawMessage("null")

// Record renders v as a version record with the given links.
func (v *Version) Record(links RecordLinks) VersionRecord {
	id, path := v.ObjectID, v.Path
	if links.Data == nil {
		links.Data = []DataLink{}
	}
	return VersionRecord{
		CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy, DeletedAt: v.DeletedAt, DeletedBy: v.DeletedBy,
		ETag: v.VersionID, GeoJSONBoundingBox: jsonNull, Links: links,
		ModifiedAt: v.ModifiedAt, ModifiedBy: v.ModifiedBy, Object: v.Object,
		ObjectID: &id, ObjectPath: &path, Stage: jsonNull, VersionID: v.VersionID, Versions: v.History,
	}
}

// Version converts a record back (used by the remote client).
func (r *VersionRecord) Version() *Version {
	v := &Version{
		VersionID: r.VersionID, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, ModifiedAt: r.ModifiedAt,
		ModifiedBy: r.ModifiedBy, DeletedAt: r.DeletedAt, DeletedBy: r.DeletedBy, Object: r.Object,
		Links: r.Links.Data, History: r.Versions,
	}
	if r.ObjectID != nil {
		v.ObjectID = *r.ObjectID
	}
	if r.ObjectPath != nil {
		v.Path = *r.ObjectPath
	}
	var env struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(r.Object, &env) == nil {
		v.Schema = env.Schema
	}
	for _, l := range r.Links.Data {
		v.DataKeys = append(v.DataKeys, l.Name)
	}
	return v
}

// ListItemRecord is the JSON list item of seed 2.4 (organisation listing),
// with the object's path and latest version id added.
type ListItemRecord struct {
	CreatedAt                          time.Time       `json:"created_at"`
	CreatedBy                          *User           `json:"created_by"`
	DeletedAt                          *time.Time      `json:"deleted_at"`
	DeletedBy                          *User           `json:"deleted_by"`
	GeoJSONBoundingBox                 json.RawMessage `json:"geojson_bounding_box"`
	GeoJSONBoundingBoxFromWorkspaceCRS bool            `json:"geojson_bounding_box_from_workspace_crs"`
	ModifiedAt                         time.Time       `json:"modified_at"`
	ModifiedBy                         *User           `json:"modified_by"`
	Name                               string          `json:"name"`
	ObjectID                           string          `json:"object_id"`
	Path                               string          `json:"path"`
	Schema                             string          `json:"schema"`
	Stage                              json.RawMessage `json:"stage"`
	VersionID                          string          `json:"version_id"`
	WorkspaceAccess                    *string         `json:"workspace_access"`
	WorkspaceID                        string          `json:"workspace_id"`
	WorkspaceName                      *string         `json:"workspace_name"`
}

// Record renders a list item.
func (it *ListItem) Record() ListItemRecord {
	r := ListItemRecord{
		CreatedAt: it.CreatedAt, CreatedBy: it.CreatedBy, DeletedAt: it.DeletedAt, DeletedBy: it.DeletedBy,
		GeoJSONBoundingBox: jsonNull, ModifiedAt: it.ModifiedAt, ModifiedBy: it.ModifiedBy, Name: it.Name,
		ObjectID: it.ObjectID, Path: it.Path, Schema: it.Schema, Stage: jsonNull, VersionID: it.VersionID,
		WorkspaceID: it.WorkspaceID,
	}
	if it.WorkspaceAccess != "" {
		a := it.WorkspaceAccess
		r.WorkspaceAccess = &a
	}
	return r
}

// Item converts a list item record back (used by the remote client).
func (r *ListItemRecord) Item(org string) ListItem {
	it := ListItem{
		ObjectID: r.ObjectID, Name: r.Name, Path: r.Path, Schema: r.Schema, VersionID: r.VersionID, OrgID: org,
		WorkspaceID: r.WorkspaceID, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, ModifiedAt: r.ModifiedAt,
		ModifiedBy: r.ModifiedBy, DeletedAt: r.DeletedAt, DeletedBy: r.DeletedBy,
	}
	if r.WorkspaceAccess != nil {
		it.WorkspaceAccess = *r.WorkspaceAccess
	}
	return it
}

// ListPageRecord is the JSON list page of seed 2.4.
type ListPageRecord struct {
	Count   int              `json:"count"`
	Limit   int              `json:"limit"`
	Links   PageLinks        `json:"links"`
	Objects []ListItemRecord `json:"objects"`
	Offset  int              `json:"offset"`
	Total   int              `json:"total"`
}

// PageLinks are the next/prev links of a list page (null at the ends).
type PageLinks struct {
	Next *string `json:"next"`
	Prev *string `json:"prev"`
}

// LatestVersionRecord is one item of the PATCH objects response.
type LatestVersionRecord struct {
	ObjectID  string  `json:"object_id"`
	VersionID *string `json:"version_id"`
}

// DataRequest is one item of the PUT data request body.
type DataRequest struct {
	Name string `json:"name"`
}

// DataResponse is one item of the PUT data response.
type DataResponse struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Exists    bool    `json:"exists"`
	UploadURL *string `json:"upload_url"`
}
