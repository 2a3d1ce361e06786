package bmapi

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmwire"
)

// versionRecord is the version record (A.5) of a stored version: its
// mapping lists the kind's system columns (col_id = title) then the user
// columns; changes only when withChanges.
func (a *Area) versionRecord(md *model, v *bmstore.Version, withChanges bool) *blockmodel.Version {
	rec := &md.doc.Record
	out := &blockmodel.Version{
		VersionID: int64(v.VersionID), VersionUUID: v.VersionUUID, ParentVersionID: int64(v.ParentVersionID),
		BMUUID: rec.BMUUID, Comment: v.Comment, CreatedAt: v.CreatedAt, CreatedBy: md.user(v.CreatedBy),
		GeoscienceVersionID: md.objectVersion(v.VersionID),
		Mapping:             blockmodel.Mapping{Columns: blockmodel.SystemColumnRecords(rec.SizeOptions.ModelType), Groups: []json.RawMessage{}},
	}
	if v.VersionID > 1 {
		base := int64(v.ParentVersionID)
		out.BaseVersionID = &base
	}
	if v.BBox != nil {
		box := blockmodel.NewIJKBox([3]int64{int64(v.BBox.I.Min), int64(v.BBox.J.Min), int64(v.BBox.K.Min)},
			[3]int64{int64(v.BBox.I.Max), int64(v.BBox.J.Max), int64(v.BBox.K.Max)})
		out.BBox = &box
	}
	for _, c := range v.UserColumns() {
		out.Mapping.Columns = append(out.Mapping.Columns, bmjob.ColumnRecord(c))
	}
	if withChanges {
		ch := v.Changes
		cc := blockmodel.ColumnChanges{New: nonNil(ch.New), Deleted: nonNil(ch.Deleted), Updated: nonNil(ch.Updated),
			Renamed: []blockmodel.Renamed{}, MetadataUpdated: []blockmodel.MetadataChange{}}
		for _, r := range ch.Renamed {
			cc.Renamed = append(cc.Renamed, blockmodel.Renamed{OldTitle: r.OldTitle, NewTitle: r.NewTitle})
		}
		for _, m := range ch.MetadataUpdated {
			cc.MetadataUpdated = append(cc.MetadataUpdated, blockmodel.MetadataChange{Title: m.Title, Values: jsonRaw(m.Values)})
		}
		out.Changes = &blockmodel.Changes{BlocksUploaded: ch.BlocksUploaded, TotalBlocks: v.Rows, UpdateType: ch.UpdateType, Columns: cc}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// VersionPage is the page of GET …/versions (the client's
// PaginatedResponseListingVersion).
type VersionPage struct {
	Count           int                   `json:"count"`
	Limit           int                   `json:"limit"`
	Offset          int                   `json:"offset"`
	Total           int                   `json:"total"`
	ReferencedUnits []blockmodel.Unit     `json:"referenced_units"`
	Results         []*blockmodel.Version `json:"results"`
}

// versions serves GET …/versions (filter=latest, offset, limit), newest
// first; listing columns carry no tags.
func (a *Area) versions(w http.ResponseWriter, r *http.Request, c *call) {
	q := r.URL.Query()
	offset, limit, err := paging(q)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	latestOnly := false
	switch f := q.Get("filter"); f {
	case "":
	case "latest":
		latestOnly = true
	default:
		a.fail(w, r, errValidation("filter", "%q: the only filter is latest", f))
		return
	}
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	all, err := a.bm.Versions(md.id())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	slices.Reverse(all)
	if latestOnly && len(all) > 1 {
		all = all[:1]
	}
	page := VersionPage{Limit: limit, Offset: offset, Total: len(all), ReferencedUnits: []blockmodel.Unit{}, Results: []*blockmodel.Version{}}
	units := map[string]bool{}
	if offset < len(all) {
		for _, v := range all[offset:min(len(all), offset+limit)] {
			rec := a.versionRecord(md, v, false)
			for i := range rec.Mapping.Columns {
				col := &rec.Mapping.Columns[i]
				col.Tags = nil
				if col.UnitID != nil && !units[*col.UnitID] {
					if u, ok := blockmodel.LookupUnit(*col.UnitID); ok {
						units[*col.UnitID] = true
						page.ReferencedUnits = append(page.ReferencedUnits, u)
					}
				}
			}
			page.Results = append(page.Results, rec)
		}
	}
	page.Count = len(page.Results)
	writeJSON(w, http.StatusOK, page)
}

// versionByUUID finds a model's version by its uuid (404 not-found).
func (a *Area) versionByUUID(md *model, id string) (*bmstore.Version, error) {
	all, err := a.bm.Versions(md.id())
	if err != nil {
		return nil, err
	}
	for _, v := range all {
		if strings.EqualFold(v.VersionUUID, id) {
			return v, nil
		}
	}
	return nil, errNotFound("block model %s has no version %s", md.id(), id)
}

// version serves GET …/versions/{version_uuid}?include_changes=.
func (a *Area) version(w http.ResponseWriter, r *http.Request, c *call) {
	changes, err := boolParam(r.URL.Query(), "include_changes", false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.versionByUUID(md, r.PathValue("version_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a.versionRecord(md, v, changes))
}

// DeltaResponse is the 200 answer of the delta check (the client's
// ListingDeltaResponseData).
type DeltaResponse struct {
	NewDeltas    []string              `json:"new_deltas"`
	UpdateDeltas []string              `json:"update_deltas"`
	DeleteDeltas []string              `json:"delete_deltas"`
	VersionData  []*blockmodel.Version `json:"version_data,omitempty"`
}

// delta serves POST …/versions/{version_uuid}/delta (A.5): 304 when no
// version after the given one (up to end_version_uuid) added a column or
// updated or deleted one of the listed columns within the box.
func (a *Area) delta(w http.ResponseWriter, r *http.Request, c *call) {
	b, err := body(w, r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	req, err := bmwire.DecodeDelta(b)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	md, err := a.modelOf(c, r.PathValue("bm_id"), false)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	from, err := a.versionByUUID(md, r.PathValue("version_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	to := 0
	if req.EndVersionUUID != nil {
		end, err := a.versionByUUID(md, req.EndVersionUUID.String())
		if err != nil {
			a.fail(w, r, errValidation("end_version_uuid", "block model %s has no version %s", md.id(), req.EndVersionUUID))
			return
		}
		if end.VersionID < from.VersionID {
			a.fail(w, r, errValidation("end_version_uuid", "version %d is before the start version %d", end.VersionID, from.VersionID))
			return
		}
		to = end.VersionID
		if to == from.VersionID {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	g, err := md.doc.Record.Geometry()
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var cols []string
	if !req.All {
		cols = req.Columns
	}
	box := deltaBox(g, req.BBox)
	newV, upd, del, err := a.bm.Deltas(md.id(), from.VersionID, to, cols, box)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if len(newV)+len(upd)+len(del) == 0 {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	out := DeltaResponse{NewDeltas: uuids(newV), UpdateDeltas: uuids(upd), DeleteDeltas: uuids(del)}
	if req.Verbose {
		seen := map[int]bool{}
		for _, list := range [][]*bmstore.Version{newV, upd, del} {
			for _, v := range list {
				if !seen[v.VersionID] {
					seen[v.VersionID] = true
					out.VersionData = append(out.VersionData, a.versionRecord(md, v, true))
				}
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func uuids(vs []*bmstore.Version) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.VersionUUID)
	}
	return out
}

// deltaBox turns a delta's box into a parent-index box: an IJK box as
// given, an XYZ box (world coordinates) as the parents whose cells the
// box's model-frame bounding box touches, clamped to the model; nil for the
// whole model.
func deltaBox(g *blockmodel.Geometry, b bmwire.BBox) *bmstore.BBox {
	switch {
	case b.IJK != nil:
		return &bmstore.BBox{I: bmstore.MinMax{Min: int(b.IJK.IMinMax.Min), Max: int(b.IJK.IMinMax.Max)},
			J: bmstore.MinMax{Min: int(b.IJK.JMinMax.Min), Max: int(b.IJK.JMinMax.Max)},
			K: bmstore.MinMax{Min: int(b.IJK.KMinMax.Min), Max: int(b.IJK.KMinMax.Max)}}
	case b.XYZ != nil:
		lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
		hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
		x, y, z := b.XYZ.XMinMax, b.XYZ.YMinMax, b.XYZ.ZMinMax
		for _, px := range []float64{x.Min, x.Max} {
			for _, py := range []float64{y.Min, y.Max} {
				for _, pz := range []float64{z.Min, z.Max} {
					l := g.WorldToLocal(px, py, pz)
					for i := range 3 {
						lo[i], hi[i] = min(lo[i], l[i]), max(hi[i], l[i])
					}
				}
			}
		}
		size, n := g.ParentSize(), g.Parents()
		var out [3]bmstore.MinMax
		for i := range 3 {
			a := int(math.Floor(lo[i] / size[i]))
			c := int(math.Floor(hi[i] / size[i]))
			out[i] = bmstore.MinMax{Min: max(a, 0), Max: min(c, n[i]-1)}
		}
		return &bmstore.BBox{I: out[0], J: out[1], K: out[2]}
	}
	return nil
}
