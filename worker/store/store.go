package store

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/geostat-engine/geostat/worker/objects"
)

// Workspace identifies a workspace of an organisation (both UUIDs).
type Workspace struct {
	Org string
	ID  string
}

// User is the brief user record of version records.
type User struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Version is one version of a geoscience object.
type Version struct {
	ObjectID string
	Path     string
	// VersionID is a Unix timestamp in nanoseconds, as a decimal string.
	VersionID string
	Schema    string
	// CreatedAt/CreatedBy are those of the object (its first version);
	// ModifiedAt/ModifiedBy those of this version.
	CreatedAt  time.Time
	CreatedBy  *User
	ModifiedAt time.Time
	ModifiedBy *User
	// DeletedAt/DeletedBy are set while the object is soft deleted.
	DeletedAt *time.Time
	DeletedBy *User
	// Object is the stored document.
	Object json.RawMessage
	// DataKeys are the blob keys the document references.
	DataKeys []string
	// Links are the download links of the blobs, when the store has them
	// (the remote client keeps the ones the API returned).
	Links []DataLink
	// History lists the object's versions, newest first, when requested
	// with Ref.IncludeVersions.
	History []VersionInfo
}

// DataLink is one entry of a version record's links.data.
type DataLink struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	DownloadURL string `json:"download_url"`
}

// VersionInfo is a short description of one version.
type VersionInfo struct {
	VersionID string    `json:"version_id"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy *User     `json:"created_by"`
}

// ETag returns the entity tag of the version (its version id, quoted).
func (v *Version) ETag() string { return `"` + v.VersionID + `"` }

// Ref addresses an object by id or path (exactly one), optionally a version.
type Ref struct {
	ID   string
	Path string
	// Version selects a version; "" means the latest.
	Version string
	// Deleted allows a soft-deleted object to be read (by id only).
	Deleted bool
	// IncludeVersions fills Version.History.
	IncludeVersions bool
}

// PutRequest is a new version of an object: by path (create or update,
// following the document's uuid) or by id (update of that object).
type PutRequest struct {
	Path string
	ID   string
	// IfMatch, when set, requires it to be the object's latest version id
	// (412 otherwise).
	IfMatch string
	// Object is the document.
	Object []byte
	By     User
	// CheckWhitespace enables the whitespace-in-segments path check.
	CheckWhitespace bool
}

// ListOptions selects a page of a workspace listing.
type ListOptions struct {
	// Deleted lists soft-deleted objects instead of live ones.
	Deleted bool
	Limit   int
	Offset  int
}

// ListItem describes an object in a listing (seed 2.4 list item).
type ListItem struct {
	ObjectID        string
	Name            string
	Path            string
	Schema          string
	VersionID       string
	OrgID           string
	WorkspaceID     string
	WorkspaceAccess string
	CreatedAt       time.Time
	CreatedBy       *User
	ModifiedAt      time.Time
	ModifiedBy      *User
	DeletedAt       *time.Time
	DeletedBy       *User
}

// Page is a page of a listing.
type Page struct {
	Items  []ListItem
	Total  int
	Limit  int
	Offset int
}

// LatestVersion is the latest version id of an object; VersionID is "" for an
// object that does not exist or is deleted.
type LatestVersion struct {
	ObjectID  string
	VersionID string
}

// Store keeps geoscience objects, their versions and their data blobs.
// Errors are *Error values with the status and type of seed 7.3.
type Store interface {
	// GetObject returns a version of an object.
	GetObject(ctx context.Context, ws Workspace, ref Ref) (*Version, error)
	// PutObject validates a document and stores it as a new version.
	PutObject(ctx context.Context, ws Workspace, req PutRequest) (*Version, error)
	// ListObjects lists the objects of a workspace, ordered by path.
	ListObjects(ctx context.Context, ws Workspace, opt ListOptions) (*Page, error)
	// ListOrgObjects lists the objects of an organisation with filters.
	ListOrgObjects(ctx context.Context, org string, q OrgQuery) (*Page, error)
	// DeleteObject soft-deletes an object.
	DeleteObject(ctx context.Context, ws Workspace, ref Ref, by User) error
	// RestoreObject restores a soft-deleted object; when its path is taken
	// meanwhile it is restored under "name (1).json", "name (2).json", ...
	RestoreObject(ctx context.Context, ws Workspace, id string, by User) (*Version, error)
	// LatestVersions returns the latest version id of each object.
	LatestVersions(ctx context.Context, ws Workspace, ids []string) ([]LatestVersion, error)
	// BlobExists reports whether a blob is stored.
	BlobExists(ctx context.Context, ws Workspace, name string) (bool, error)
	// PutBlob stores a blob; for a SHA-256 name the bytes must hash to it.
	PutBlob(ctx context.Context, ws Workspace, name string, r io.Reader) error
	// OpenBlob opens a blob referenced by version v.
	OpenBlob(ctx context.Context, ws Workspace, v *Version, name string) (objects.BlobFile, error)
	// Close releases the store.
	Close() error
}

// Blobs adapts a store to objects.BlobOpener for the blobs of version v.
func Blobs(s Store, ws Workspace, v *Version) objects.BlobOpener {
	return blobOpener{s: s, ws: ws, v: v}
}

type blobOpener struct {
	s  Store
	ws Workspace
	v  *Version
}

func (b blobOpener) OpenBlob(ctx context.Context, key string) (objects.BlobFile, error) {
	return b.s.OpenBlob(ctx, b.ws, b.v, key)
}
