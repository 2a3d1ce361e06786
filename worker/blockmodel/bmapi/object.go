package bmapi

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/store"
)

// ObjectSchema is the schema of the block model's geoscience object (A.13).
const ObjectSchema = "/objects/block-model/1.0.0/block-model.schema.json"

// ObjectDocument is the linked block-model object of a model record at
// version v (A.13): name, description, bounding box and CRS from the
// record, the geometry of its kind, rotation from normalized_rotation
// (omitted when all three angles are 0), and one attribute per user column
// of v (Boolean and Utf8 as category attributes). It holds no data blobs.
func ObjectDocument(rec *blockmodel.Record, objectID string, v *bmstore.Version) (map[string]any, error) {
	g, err := rec.Geometry()
	if err != nil {
		return nil, fmt.Errorf("bmapi: model %s geometry: %w", rec.BMUUID, err)
	}
	bb := rec.BBox
	attrs := []any{}
	for _, c := range v.UserColumns() {
		attrs = append(attrs, map[string]any{
			"name":                    c.Title,
			"key":                     c.ColID,
			"attribute_type":          string(c.DataType),
			"block_model_column_uuid": c.ColID,
		})
	}
	doc := map[string]any{
		"schema":                      ObjectSchema,
		"name":                        rec.Name,
		"bounding_box":                map[string]float64{"min_x": bb.XMinMax.Min, "max_x": bb.XMinMax.Max, "min_y": bb.YMinMax.Min, "max_y": bb.YMinMax.Max, "min_z": bb.ZMinMax.Min, "max_z": bb.ZMinMax.Max},
		"coordinate_reference_system": objectCRS(rec.CoordinateReferenceSystem),
		"block_model_uuid":            rec.BMUUID,
		"block_model_version_uuid":    v.VersionUUID,
		"geometry":                    g.ObjectGeometry(),
		"attributes":                  attrs,
	}
	doc["uuid"] = nil // a new object: the store assigns its id
	if objectID != "" {
		doc["uuid"] = objectID
	}
	if rec.Description != nil {
		doc["description"] = *rec.Description
	}
	return doc, nil
}

// objectCRS maps a model's coordinate_reference_system to the object's:
// EPSG:n → {epsg_code: n}, WKT → {ogc_wkt: s}, none → "unspecified".
func objectCRS(crs *string) any {
	if crs == nil || *crs == "" {
		return "unspecified"
	}
	if code, ok := strings.CutPrefix(strings.ToUpper(*crs), "EPSG:"); ok {
		if n, err := strconv.Atoi(code); err == nil {
			return map[string]int{"epsg_code": n}
		}
	}
	return map[string]string{"ogc_wkt": *crs}
}

// putObject writes the next version of a model's linked object, mirroring
// version v (create: the object's first version, at the model's object
// path, setting the record's geoscience_object_id), and returns its
// version id.
func (a *Area) putObject(ctx context.Context, md *model, v *bmstore.Version, by store.User, create bool) (string, error) {
	rec := &md.doc.Record
	if rec.GeoscienceObjectID == nil && !create {
		return "", fmt.Errorf("bmapi: model %s has no geoscience object", md.id())
	}
	id := ""
	if !create {
		id = *rec.GeoscienceObjectID
	}
	doc, err := ObjectDocument(rec, id, v)
	if err != nil {
		return "", err
	}
	req := store.PutRequest{Object: jsonRaw(doc), By: by}
	if create {
		req.Path = md.doc.ObjectPath
	} else {
		req.ID = *rec.GeoscienceObjectID
	}
	ws := store.Workspace{Org: rec.OrgUUID, ID: rec.WorkspaceID}
	ov, err := a.objects.PutObject(ctx, ws, req)
	if err != nil {
		return "", fmt.Errorf("bmapi: writing the geoscience object of block model %s: %w", md.id(), err)
	}
	if create {
		oid := ov.ObjectID
		rec.GeoscienceObjectID = &oid
	}
	return ov.VersionID, nil
}
