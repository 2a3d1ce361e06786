package server

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// blockModelLinked are the members of a block-model object that mirror its
// block model (A.13): the block model area writes them, the object routes
// may not change them.
var blockModelLinked = []string{"block_model_uuid", "block_model_version_uuid", "geometry", "attributes"}

// isBlockModelObject reports whether a stored version is a block-model
// object (whose members mirror a model of the block model area).
func isBlockModelObject(v *store.Version) bool {
	return v != nil && strings.HasPrefix(v.Schema, "/objects/block-model/")
}

// existing returns the latest version of the object a write or delete
// addresses (nil when there is none).
func (a *App) existing(ctx context.Context, ws store.Workspace, ref store.Ref) *store.Version {
	if ref.ID == "" && ref.Path == "" {
		return nil
	}
	v, err := a.embedded.GetObject(ctx, ws, store.Ref{ID: ref.ID, Path: ref.Path})
	if err != nil {
		return nil
	}
	return v
}

// checkBlockModelWrite refuses (400 invalid-object) a write through the
// object routes that changes the members of a block-model object its block
// model owns (A.13, OPEN-30); tags, extensions, description and the like
// may change.
func (a *App) checkBlockModelWrite(ctx context.Context, ws store.Workspace, req store.PutRequest) error {
	cur := a.existing(ctx, ws, store.Ref{ID: req.ID, Path: req.Path})
	if !isBlockModelObject(cur) {
		return nil
	}
	old, err := objects.DecodeJSON(cur.Object)
	if err != nil {
		return nil
	}
	doc, err := objects.DecodeJSON(req.Object)
	if err != nil {
		return nil // the store reports the body
	}
	for _, m := range blockModelLinked {
		if !reflect.DeepEqual(old[m], doc[m]) {
			return store.ErrInvalidObject(fmt.Sprintf("%s of a block-model object mirrors its block model %v: change the block model through /blockmodel routes instead", m, old["block_model_uuid"]), "/"+m, nil)
		}
	}
	return nil
}

// checkBlockModelDelete refuses (409) the delete of a block-model object
// through the object routes (A.13, OPEN-31): deleting its block model
// deletes it.
func (a *App) checkBlockModelDelete(ctx context.Context, ws store.Workspace, ref store.Ref) error {
	cur := a.existing(ctx, ws, ref)
	if !isBlockModelObject(cur) {
		return nil
	}
	doc, _ := objects.DecodeJSON(cur.Object)
	return problem.New(http.StatusConflict, problem.ObjectBlockModelLinked, "Linked To A Block Model.",
		fmt.Sprintf("object %s is the geoscience object of block model %v: delete the block model instead", cur.ObjectID, doc["block_model_uuid"]))
}
