package tasks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/store"
)

// StoreAdapter gives the tasks their view of a store.Store: decoded object
// versions, blob uploads through temporary files, and conditional new
// versions.
type StoreAdapter struct {
	Store store.Store
	// TempDir holds blobs while they are written (default os.TempDir()).
	TempDir string
}

// Get implements ObjectStore.
func (a *StoreAdapter) Get(ctx context.Context, ref ObjectRef) (*Version, error) {
	ws := store.Workspace{Org: ref.Org, ID: ref.Workspace}
	v, err := a.Store.GetObject(ctx, ws, store.Ref{ID: ref.ObjectID, Path: ref.Path, Version: ref.Version})
	if err != nil {
		if store.IsNotFound(err) {
			return nil, fmt.Errorf("%s: %w", ref.Raw, ErrNotFound)
		}
		return nil, err
	}
	obj, err := objects.Decode(v.Object)
	if errors.Is(err, objects.ErrUnsupportedSchema) || (err == nil && obj.Schema.Kind == KindBlockModel) {
		// A block model object holds no data the objects package models:
		// the tasks read it themselves.
		if obj, bm, ok, err := decodeBlockModelObject(v.Object); ok {
			if err != nil {
				return nil, err
			}
			return &Version{Object: obj, ObjectID: v.ObjectID, Path: v.Path, VersionID: v.VersionID, BlockModel: bm}, nil
		}
	}
	if err != nil {
		return nil, &objects.DataError{Err: err}
	}
	return &Version{Object: obj, ObjectID: v.ObjectID, Path: v.Path, VersionID: v.VersionID, Blobs: store.Blobs(a.Store, ws, v)}, nil
}

// NewBlob implements ObjectStore: the bytes go to a temporary file and are
// handed to the store on Commit.
func (a *StoreAdapter) NewBlob(ctx context.Context, org, workspace string) (BlobSink, error) {
	f, err := os.CreateTemp(a.TempDir, "blob-*.parquet")
	if err != nil {
		return nil, fmt.Errorf("writing a blob: %w", err)
	}
	return &fileSink{f: f, store: a.Store, ws: store.Workspace{Org: org, ID: workspace}}, nil
}

// PutVersion implements ObjectStore.
func (a *StoreAdapter) PutVersion(ctx context.Context, org, workspace, objectID, ifMatch string, doc []byte, user store.User) (string, error) {
	v, err := a.Store.PutObject(ctx, store.Workspace{Org: org, ID: workspace}, store.PutRequest{ID: objectID, IfMatch: ifMatch, Object: doc, By: user})
	if err != nil {
		if store.StatusOf(err) == http.StatusPreconditionFailed {
			return "", fmt.Errorf("%w: %v", ErrStale, err)
		}
		return "", err
	}
	return v.VersionID, nil
}

// CreateObject implements ObjectStore.
func (a *StoreAdapter) CreateObject(ctx context.Context, org, workspace, path string, doc []byte, user store.User) (string, string, error) {
	v, err := a.Store.PutObject(ctx, store.Workspace{Org: org, ID: workspace}, store.PutRequest{Path: path, Object: doc, By: user})
	if err != nil {
		if store.StatusOf(err) == http.StatusConflict {
			// Both wrapped: ErrExists for the caller's test, the store's
			// error for its problem document (409).
			return "", "", fmt.Errorf("%w: %w", ErrExists, err)
		}
		return "", "", err
	}
	return v.ObjectID, v.VersionID, nil
}

type fileSink struct {
	f     *os.File
	store store.Store
	ws    store.Workspace
}

func (s *fileSink) Write(p []byte) (int, error) { return s.f.Write(p) }

func (s *fileSink) Commit(ctx context.Context, key string) error {
	defer s.Abort()
	if _, err := s.f.Seek(0, 0); err != nil {
		return err
	}
	if err := s.store.PutBlob(ctx, s.ws, key, s.f); err != nil {
		return fmt.Errorf("storing blob %s: %w", key, err)
	}
	return nil
}

func (s *fileSink) Abort() {
	s.f.Close()
	os.Remove(s.f.Name())
}
