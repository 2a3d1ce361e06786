package bmapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/store"
)

// ErrModelNotFound is returned by OpenModel for a model that does not
// exist, is deleted or belongs to another workspace.
var ErrModelNotFound = errors.New("bmapi: no such block model in the workspace")

// OpenModel returns the geometry of a live model of workspace (org, ws),
// for the compute tasks (A.14.3): they read it through Store.
func (a *Area) OpenModel(org, ws, id string) (*blockmodel.Geometry, error) {
	md, err := a.loadModel(strings.ToLower(id))
	if errors.Is(err, bmstore.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrModelNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	rec := md.doc.Record
	if md.deleted() || !strings.EqualFold(rec.OrgUUID, org) || !strings.EqualFold(rec.WorkspaceID, ws) {
		return nil, fmt.Errorf("%w: %s", ErrModelNotFound, id)
	}
	return rec.Geometry()
}

// WriteColumn writes one task result column as the model's new version
// (bmjob.WriteColumn on the latest version: the column store's change
// holds the model's lock, so concurrent writers each add their column),
// then the linked object's version mirroring it (A.13, recorded as the
// version's geoscience_version_id). It returns the version and the
// object's id and version id. On an error of bmjob.WriteColumn nothing is
// written; when the object write fails after the version is committed,
// the version stays and RepairObjects writes its object at the next start.
func (a *Area) WriteColumn(ctx context.Context, w bmjob.ColumnWrite, by store.User) (v *bmstore.Version, objectID, objectVersion string, err error) {
	if _, err := a.loadModel(w.ModelID); err != nil {
		return nil, "", "", err
	}
	if w.CreatedBy == "" {
		w.CreatedBy = by.ID
	}
	v, err = bmjob.WriteColumn(ctx, a.bm, w)
	if err != nil {
		return nil, "", "", err
	}
	md, err := a.recordVersion(ctx, w.ModelID, v, by)
	if err != nil {
		return v, "", "", err
	}
	ov := md.objectVersion(v.VersionID)
	if ov == nil || md.doc.Record.GeoscienceObjectID == nil {
		return v, "", "", fmt.Errorf("bmapi: model %s version %d: no object version recorded", w.ModelID, v.VersionID)
	}
	return v, *md.doc.Record.GeoscienceObjectID, *ov, nil
}

// RepairObjects writes the linked object's version of every live model
// whose latest version has none recorded (a worker stopped between the
// version's commit and the object's write, A.13 crash safety). It returns
// the number of objects written.
func (a *Area) RepairObjects(ctx context.Context) (int, error) {
	all, err := a.allModels()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, md := range all {
		if md.deleted() || md.doc.Record.GeoscienceObjectID == nil {
			continue
		}
		latest, err := a.bm.Latest(md.id())
		if err != nil {
			return n, err
		}
		if md.objectVersion(latest) != nil {
			continue
		}
		v, err := a.bm.Version(md.id(), latest)
		if err != nil {
			return n, err
		}
		if _, err := a.recordVersion(ctx, md.id(), v, store.User{ID: v.CreatedBy}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
