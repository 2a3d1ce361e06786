package tasks_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/geostat-engine/geostat/worker/store"
)

// bmCase is the data of the block model tests: a point set with "au"
// (pts.json) and a variogram (vario.json) in the worker of startBM.
type bmCase struct {
	h          *harness
	area       *testBlockModels
	b          *objecttest.Blobs
	xyz, grade []float64
	variogram  *geostat.Variogram
}

func newBMCase(t *testing.T, maxJobs int) *bmCase {
	h, area := startBM(t, maxJobs)
	c := &bmCase{h: h, area: area, b: objecttest.NewBlobs()}
	c.xyz, c.grade = sampleData(250, 3)
	h.put(c.b, "pts.json", c.b.Pointset("1.2.0", c.xyz, c.b.Scalar("au", "k-au", c.grade)))
	vdoc := objecttest.Variogram("1.2.0")
	h.put(c.b, "vario.json", vdoc)
	vobj, err := objects.Decode(objecttest.JSON(vdoc))
	require.NoError(t, err)
	dv, err := vobj.DecodeVariogram()
	require.NoError(t, err)
	c.variogram = dv.Variogram
	return c
}

// objectURL is the reference of an object by id.
func (c *bmCase) objectURL(id string) string {
	return c.h.c.Base + "/geoscience-object/orgs/" + org + "/workspaces/" + ws + "/objects/" + id
}

// krige runs ordinary kriging of au onto target (a URL) creating name,
// with the block discretisation disc (nil: points), and returns the job's
// results.
func (c *bmCase) krige(t *testing.T, target, name string, disc map[string]any, filter map[string]any) map[string]any {
	t.Helper()
	tg := map[string]any{"object": target, "attribute": map[string]any{"operation": "create", "name": name}}
	if filter != nil {
		tg["filter"] = map[string]any{"where": filter}
	}
	params := map[string]any{
		"source":       map[string]any{"object": c.h.url("pts.json"), "attribute": "locations.attributes[?name=='au']"},
		"target":       tg,
		"variogram":    c.h.url("vario.json"),
		"neighborhood": neighbourhood(16),
	}
	if disc != nil {
		params["block_discretisation"] = disc
	}
	job, err := c.h.c.RunTask(c.h.ctx, org, "kriging", params)
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	var res map[string]any
	require.NoError(t, json.Unmarshal(job.Results, &res))
	return res
}

// sameBits asserts two columns are equal bit for bit (NaN where NaN), with
// some finite values.
func sameBits(t *testing.T, want, got []float64, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	finite := 0
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "row %d: want NaN, got %v %v", i, got[i], fmt.Sprint(msg...))
			continue
		}
		finite++
		require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "row %d: %v != %v %v", i, want[i], got[i], fmt.Sprint(msg...))
	}
	require.Greater(t, finite, len(want)/2, "most rows have values")
}

// Equal to the grid (issue 30): kriging onto a regular block model equals,
// bit for bit, kriging onto the regular-3d-grid object of the same
// geometry, unrotated and rotated, at points and with block
// discretisation; the result names the block model object's new version.
func TestKrigingRegularBlockModelEqualsGrid(t *testing.T) {
	c := newBMCase(t, 2)
	h := c.h
	origin := blockmodel.XYZ{X: 2.5, Y: -3.25, Z: 0.5}
	rotations := [][]blockmodel.RotationItem{nil, {{Axis: "z", Angle: 30}, {Axis: "x", Angle: 20}, {Axis: "z", Angle: 10}}}
	for i, items := range rotations {
		g, err := blockmodel.NewGeometry(origin, items, blockmodel.RegularSize(blockmodel.Size3D{NX: 8, NY: 7, NZ: 3}, blockmodel.XYZ{X: 12.5, Y: 13, Z: 6}))
		require.NoError(t, err)
		rot := g.GridRotation()
		spec := objecttest.GridSpec{Origin: origin.Array(), Size: [3]int{8, 7, 3}, CellSize: [3]float64{12.5, 13, 6}, Rotation: &rot}
		gridPath := fmt.Sprintf("grid-%d.json", i)
		gid := h.put(c.b, gridPath, c.b.Grid("1.3.0", spec))
		bmID, objID := c.area.createModel(fmt.Sprintf("smu-%d", i), g, nil)
		for _, disc := range []map[string]any{nil, {"nx": 3, "ny": 2, "nz": 2}} {
			name := fmt.Sprintf("est_%d_%v", i, disc != nil)
			c.krige(t, h.url(gridPath), name, disc, nil)
			res := c.krige(t, c.objectURL(objID), name, disc, nil)
			obj, blobs := h.latest(gid)
			want := h.column(obj, blobs, name)
			sameBits(t, want, c.area.column(bmID, name), items, disc)

			// The result is the client's TaskTarget of the object's new
			// version, which mirrors the model's new version.
			tg := res["target"].(map[string]any)
			assert.Equal(t, "/objects/block-model/1.0.0/block-model.schema.json", tg["schema_id"])
			assert.Equal(t, fmt.Sprintf("smu-%d", i), tg["name"])
			assert.Equal(t, "a test block model", tg["description"])
			assert.Equal(t, map[string]any{"reference": "attributes[?name=='" + name + "']", "name": name}, tg["attribute"])
			vid, doc := latestDoc(t, h, objID)
			assert.Equal(t, c.objectURL(objID)+"?version="+vid, tg["reference"])
			latest := c.area.latest(bmID)
			assert.Equal(t, latest.VersionUUID, doc["block_model_version_uuid"])
			assert.Contains(t, fmt.Sprint(doc["attributes"]), name)
			assert.Equal(t, "00000000-0000-4000-8000-0000000000aa", latest.CreatedBy)
			assert.Regexp(t, `^kriging \(compute job [0-9a-f-]+\): created column `+name+`$`, latest.Comment)
		}
	}
}

// subBlocked returns a flexible model (4 × 4 × 2 parents of 25 × 25 × 10,
// 2 × 2 × 2 sub-cells, rotated 15° about z) whose parents are whole, split
// in two along x or in eight, and its rows.
func subBlocked(t *testing.T) (*blockmodel.Geometry, *blockmodel.Blocks) {
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{X: 5, Y: -10, Z: 0}, []blockmodel.RotationItem{{Axis: "z", Angle: 15}},
		blockmodel.SubBlockedSize(blockmodel.Flexible, blockmodel.Size3D{NX: 4, NY: 4, NZ: 2}, blockmodel.Size3D{NX: 2, NY: 2, NZ: 2}, blockmodel.XYZ{X: 25, Y: 25, Z: 10}))
	require.NoError(t, err)
	var parent []uint32
	var start, end []uint8
	add := func(p int, s, e [3]uint8) {
		parent = append(parent, uint32(p))
		start = append(start, s[:]...)
		end = append(end, e[:]...)
	}
	for p := 0; p < 32; p++ {
		switch p % 3 {
		case 0:
			add(p, [3]uint8{0, 0, 0}, [3]uint8{2, 2, 2})
		case 1:
			add(p, [3]uint8{0, 0, 0}, [3]uint8{1, 2, 2})
			add(p, [3]uint8{1, 0, 0}, [3]uint8{2, 2, 2})
		case 2:
			for k := uint8(0); k < 2; k++ {
				for j := uint8(0); j < 2; j++ {
					for i := uint8(0); i < 2; i++ {
						add(p, [3]uint8{i, j, k}, [3]uint8{i + 1, j + 1, k + 1})
					}
				}
			}
		}
	}
	b, err := blockmodel.NewBlocks(g, parent, start, end)
	require.NoError(t, err)
	return g, b
}

// domains labels the rows of a model LMS1, LMS2 or nothing (null).
func domains(n int64) []string {
	out := make([]string, n)
	for r := range out {
		out[r] = []string{"LMS1", "LMS2", "", "LMS1"}[r%4]
	}
	return out
}

// rowCentroids are the centroids of a model's rows, flat xyz.
func rowCentroids(b *blockmodel.Blocks) []float64 {
	var out []float64
	for r := int64(0); r < b.NumRows(); r++ {
		p := b.Centroid(r)
		out = append(out, p[:]...)
	}
	return out
}

// Equal to the grid, sub-blocked (issue 30): point kriging onto a
// sub-blocked model equals kriging onto a point set at the sub-block
// centroids bit for bit, and block kriging discretises every sub-block by
// its own extent, rotated with the model: each row equals the library's
// block kriging of that one block (cell size its extent) at its centroid,
// computed here independently of the model's code.
func TestKrigingSubBlockedModelEqualsPointsAtCentroids(t *testing.T) {
	c := newBMCase(t, 2)
	h := c.h
	g, b := subBlocked(t)
	bmID, objID := c.area.createModel("sub", g, b)
	cents := rowCentroids(b)

	// The centroids are the sub-blocks' centres: origin + R·local centre.
	m := geostat.Rotation{DipAzimuth: 15}.Matrix()
	parent, start, end := b.Columns()
	ext := make([][3]float64, b.NumRows())
	for r := range ext {
		p := int(parent[r])
		ijk := [3]int{p % 4, p / 4 % 4, p / 16}
		size := [3]float64{25, 25, 10}
		var local [3]float64
		for a := 0; a < 3; a++ {
			s, e := float64(start[3*r+a]), float64(end[3*r+a])
			local[a] = (float64(ijk[a]) + (s+e)/4) * size[a]
			ext[r][a] = (e - s) / 2 * size[a]
		}
		x, y, z := m.Apply(local[0], local[1], local[2])
		assert.InDelta(t, 5+x, cents[3*r], 1e-9)
		assert.InDelta(t, -10+y, cents[3*r+1], 1e-9)
		assert.InDelta(t, z, cents[3*r+2], 1e-9)
	}

	h.put(c.b, "centroids.json", c.b.Pointset("1.3.0", cents))
	c.krige(t, h.url("centroids.json"), "est", nil, nil)
	c.krige(t, c.objectURL(objID), "est", nil, nil)
	pid := objectIDOf(t, h, "centroids.json")
	obj, blobs := h.latest(pid)
	sameBits(t, h.column(obj, blobs, "est"), c.area.column(bmID, "est"), "point kriging")

	disc := grid.BlockDiscretisation{NX: 2, NY: 3, NZ: 2}
	c.krige(t, c.objectURL(objID), "est_b", map[string]any{"nx": 2, "ny": 3, "nz": 2}, nil)
	got := c.area.column(bmID, "est_b")
	search := neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15}, MaxSamples: 16}
	extents := map[[3]float64]bool{}
	for r := range ext {
		extents[ext[r]] = true
		k, err := kriging.New(c.xyz, c.grade, kriging.Params{Variogram: c.variogram, Method: kriging.Ordinary, Search: search,
			Discretisation: disc, CellSize: ext[r], Rotation: geostat.Rotation{DipAzimuth: 15}})
		require.NoError(t, err)
		out := kriging.Output{Estimate: make([]float64, 1)}
		require.NoError(t, k.Estimate(h.ctx, cents[3*r:3*r+3], &out, nil))
		require.InDelta(t, out.Estimate[0], got[r], 1e-9*max(1, math.Abs(out.Estimate[0])), "row %d", r)
	}
	assert.Len(t, extents, 3, "whole parents, halves and eighths")
	// Block kriging differs from point kriging: the discretisation is used.
	assert.NotEqual(t, c.area.column(bmID, "est"), got)
}

// objectIDOf returns the id of the object at path.
func objectIDOf(t *testing.T, h *harness, path string) string {
	t.Helper()
	rec, err := h.c.GetObject(h.ctx, org, ws, "path/"+path, "")
	require.NoError(t, err)
	require.NotNil(t, rec.ObjectID)
	return *rec.ObjectID
}

// latestDoc returns the latest version id and document of an object.
func latestDoc(t *testing.T, h *harness, id string) (string, map[string]any) {
	t.Helper()
	rec, err := h.c.GetObject(h.ctx, org, ws, id, "")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Object, &doc))
	return rec.VersionID, doc
}

// knn and idw estimate onto every sub-block at its centroid, on both
// topics: each equals the same task onto a point set at the centroids,
// and the seed topic's element path is /attributes/@name=<title>.
func TestKNNAndIDWOntoBlockModel(t *testing.T) {
	c := newBMCase(t, 2)
	h := c.h
	g, b := subBlocked(t)
	bmID, objID := c.area.createModel("sub", g, b)
	h.put(c.b, "centroids.json", c.b.Pointset("1.3.0", rowCentroids(b)))
	pid := objectIDOf(t, h, "centroids.json")

	for _, task := range []string{"knn", "idw"} {
		for _, target := range []string{c.objectURL(objID), h.url("centroids.json")} {
			params := map[string]any{
				"source":       map[string]any{"object": h.url("pts.json"), "attribute": "locations.attributes[?name=='au']"},
				"target":       map[string]any{"object": target, "attribute": map[string]any{"operation": "create", "name": task}},
				"neighborhood": neighbourhood(8),
			}
			if task == "idw" {
				params["power"] = 2
			}
			job, err := h.c.RunTask(h.ctx, org, task, params)
			require.NoError(t, err)
			require.Equal(t, "succeeded", job.Status, "%s", job.Error)
		}
		obj, blobs := h.latest(pid)
		sameBits(t, h.column(obj, blobs, task), c.area.column(bmID, task), task)
		assert.Regexp(t, `^`+task+` \(compute job [0-9a-f-]+\): created column `+task+`$`, c.area.latest(bmID).Comment)
	}

	// The seed topic, updating the knn column in place (its col_id kept).
	before, _ := c.area.latest(bmID).Column("knn")
	seed := func(target string) []byte {
		body, _ := json.Marshal(map[string]any{
			"source": map[string]any{"type": "geoscience-object-reference", "object_reference": h.url("pts.json"),
				"object_element": []any{map[string]any{"type": "element", "path": "/locations/attributes/@name=au"}}},
			"target": map[string]any{"object_reference": target, "object_element": []any{map[string]any{"path": "/attributes/@name=knn"}}},
			"neighborhood": map[string]any{"max-samples": 5, "anisotropy": map[string]any{
				"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15}}}})
		return body
	}
	r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/knn", seed(c.objectURL(objID)))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	var res struct {
		ObjectModified struct {
			Type            string                        `json:"type"`
			ObjectReference string                        `json:"object_reference"`
			ObjectElement   []struct{ Type, Path string } `json:"object_element"`
		} `json:"object_modified"`
	}
	require.NoError(t, r.JSON(&res))
	vid, _ := latestDoc(t, h, objID)
	assert.Equal(t, c.objectURL(objID)+"?version="+vid, res.ObjectModified.ObjectReference)
	assert.Equal(t, "/attributes/@name=knn", res.ObjectModified.ObjectElement[0].Path)
	after, _ := c.area.latest(bmID).Column("knn")
	assert.Equal(t, before.ColID, after.ColID, "a create over a Float64 column updates it in place")
	assert.Regexp(t, `\): updated column knn$`, c.area.latest(bmID).Comment)

	r, err = h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/knn", seed(h.url("centroids.json")))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	obj, blobs := h.latest(pid)
	sameBits(t, h.column(obj, blobs, "knn"), c.area.column(bmID, "knn"), "seed knn")
}

// A block model as source: its numeric column at the block centroids (nulls
// missing) gives the same kriging as a point set of those centroids and
// values, and the same continuous distribution; a source reads the model
// version its object version mirrors.
func TestBlockModelAsSource(t *testing.T) {
	c := newBMCase(t, 2)
	h := c.h
	g, b := subBlocked(t)
	cents := rowCentroids(b)
	values := make([]float64, b.NumRows())
	for r := range values {
		values[r] = 1 + math.Sin(cents[3*r]/20) + 0.3*math.Cos(cents[3*r+1]/15)
	}
	values[3], values[17] = math.NaN(), math.NaN()
	dom := domains(b.NumRows())
	hi := make([]bool, b.NumRows())
	for r := range hi {
		hi[r] = r%3 != 0
	}
	bmID, objID := c.area.createModel("src", g, b, floatColumn("cu", values), stringColumn("domain", dom),
		bmColumn{"hi", bmstore.Column{Type: blockmodel.Boolean, Bools: hi}})
	v1, _ := latestDoc(t, h, objID)
	created := c.area.latest(bmID).VersionID
	// A later version changes cu: the object version pinned below still
	// reads version 1, which it mirrors.
	shifted := make([]float64, len(values))
	for r := range values {
		shifted[r] = values[r] + 100
	}
	bm, err := c.area.Open(h.ctx, org, ws, bmID)
	require.NoError(t, err)
	_, err = c.area.WriteColumn(h.ctx, bm, bmjob.ColumnWrite{ModelID: bmID, Rows: b, Operation: bmjob.OpUpdate, Title: "cu", Values: shifted, Comment: "shift"}, store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"})
	require.NoError(t, err)
	require.Equal(t, created+1, c.area.latest(bmID).VersionID)
	h.put(c.b, "cpts.json", c.b.Pointset("1.3.0", cents, c.b.Scalar("cu", "k-cu", values)))
	tspec := objecttest.GridSpec{Origin: [3]float64{0, -5, 0}, Size: [3]int{6, 6, 3}, CellSize: [3]float64{15, 15, 6}}
	gid := h.put(c.b, "tgrid.json", c.b.Grid("1.3.0", tspec))

	for i, src := range []map[string]any{
		{"object": c.objectURL(objID) + "?version=" + v1, "attribute": "attributes[?name=='cu']"},
		{"object": h.url("cpts.json"), "attribute": "locations.attributes[?name=='cu']"},
	} {
		job, err := h.c.RunTask(h.ctx, org, "kriging", map[string]any{
			"source":       src,
			"target":       map[string]any{"object": h.url("tgrid.json"), "attribute": map[string]any{"operation": "create", "name": fmt.Sprintf("cu_%d", i)}},
			"variogram":    h.url("vario.json"),
			"neighborhood": neighbourhood(12),
		})
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
		dist := map[string]any{"source": src, "target": map[string]any{"reference": h.url(fmt.Sprintf("dist-%d.json", i))}}
		job, err = h.c.RunTask(h.ctx, org, "continuous-distribution", dist)
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	}
	// A source filter on the model's columns: a Utf8 column as categories
	// and a Boolean as 1/0; the samples filtered out are missing.
	masked := append([]float64(nil), values...)
	for r := range masked {
		if dom[r] != "LMS1" || !hi[r] {
			masked[r] = math.NaN()
		}
	}
	h.put(c.b, "mpts.json", c.b.Pointset("1.3.0", cents, c.b.Scalar("cu", "k-cu", masked)))
	for i, src := range []map[string]any{
		{"object": c.objectURL(objID) + "?version=" + v1, "attribute": "attributes[?name=='cu']", "filter": map[string]any{"where": map[string]any{
			"type": "all_of", "filters": []any{
				map[string]any{"type": "condition", "attribute": "attributes[?name=='domain']", "operator": "in", "values": []any{"LMS1"}},
				map[string]any{"type": "condition", "attribute": "attributes[?name=='hi']", "operator": "equal", "threshold": 1}}}}},
		{"object": h.url("mpts.json"), "attribute": "locations.attributes[?name=='cu']"},
	} {
		job, err := h.c.RunTask(h.ctx, org, "knn", map[string]any{
			"source":       src,
			"target":       map[string]any{"object": h.url("tgrid.json"), "attribute": map[string]any{"operation": "create", "name": fmt.Sprintf("f_%d", i)}},
			"neighborhood": neighbourhood(12),
		})
		require.NoError(t, err)
		require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	}
	// The seed topic, from the object's latest version (which mirrors the
	// model's version 2: the shifted values).
	h.put(c.b, "spts.json", c.b.Pointset("1.3.0", cents, c.b.Scalar("cu", "k-cu", shifted)))
	for i, src := range []string{c.objectURL(objID), h.url("spts.json")} {
		path := "/attributes/@name=cu"
		if i == 1 {
			path = "/locations/attributes/@name=cu"
		}
		r, err := h.c.Do(h.ctx, http.MethodPost, "/compute/orgs/"+org+"/geostat/knn", mustJSON(map[string]any{
			"source": map[string]any{"type": "geoscience-object-reference", "object_reference": src,
				"object_element": []any{map[string]any{"type": "element", "path": path}}},
			"target": map[string]any{"object_reference": h.url("tgrid.json"), "object_element": []any{map[string]any{"path": fmt.Sprintf("/cell_attributes/@name=s_%d", i)}}},
			"neighborhood": map[string]any{"max-samples": 6, "anisotropy": map[string]any{
				"ellipsoid_ranges": map[string]any{"major": 60, "semi_major": 40, "minor": 15}}}}))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	}
	obj, blobs := h.latest(gid)
	sameBits(t, h.column(obj, blobs, "s_1"), h.column(obj, blobs, "s_0"), "seed knn from the model's latest version")
	sameBits(t, h.column(obj, blobs, "cu_1"), h.column(obj, blobs, "cu_0"), "kriging from the model and from the point set")
	sameBits(t, h.column(obj, blobs, "f_1"), h.column(obj, blobs, "f_0"), "a filtered model source and the point set of the kept samples")
	_, d0 := readDistribution(t, h, objectIDOf(t, h, "dist-0.json"))
	_, d1 := readDistribution(t, h, objectIDOf(t, h, "dist-1.json"))
	sameDistribution(t, d1, d0)

	// Not a continuous column: a Utf8 source.
	_, sid := c.area.createModel("src2", g, b, stringColumn("domain", domains(b.NumRows())))
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/continuous-distribution", mustJSON(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": c.objectURL(sid), "attribute": "attributes[?name=='domain']"},
		"target": map[string]any{"reference": h.url("dist-x.json")}}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, fmt.Sprint(p["invalid-params"]), "not a continuous column")
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A target filter on a Utf8 column acts on categories whose names are the
// values: rows in LMS1 or LMS2 get the estimate, the others (and nulls)
// none; an update through a filter keeps the other rows' values.
func TestBlockModelUtf8Filter(t *testing.T) {
	c := newBMCase(t, 2)
	h := c.h
	g, b := subBlocked(t)
	dom := domains(b.NumRows())
	bmID, objID := c.area.createModel("dom", g, b, stringColumn("domain", dom))
	c.krige(t, c.objectURL(objID), "all", nil, nil)
	c.krige(t, c.objectURL(objID), "lms1", nil, map[string]any{"type": "condition", "attribute": "attributes[?name=='domain']", "operator": "in", "values": []any{"LMS1"}})
	c.krige(t, c.objectURL(objID), "not1", nil, map[string]any{"type": "condition", "attribute": "attributes[?name=='domain']", "operator": "not_in", "values": []any{"LMS1"}})
	all, lms1, not1 := c.area.column(bmID, "all"), c.area.column(bmID, "lms1"), c.area.column(bmID, "not1")
	for r := range dom {
		switch dom[r] {
		case "LMS1":
			assert.Equal(t, all[r], lms1[r], "row %d", r)
			assert.True(t, math.IsNaN(not1[r]), "row %d", r)
		case "LMS2":
			assert.True(t, math.IsNaN(lms1[r]), "row %d", r)
			assert.Equal(t, all[r], not1[r], "row %d", r)
		default:
			assert.True(t, math.IsNaN(lms1[r]) && math.IsNaN(not1[r]), "row %d: a null fails every condition", r)
		}
	}

	// An update of "lms1" restricted to LMS2 writes those rows and keeps
	// the LMS1 rows' values (merge).
	job, err := h.c.RunTask(h.ctx, org, "kriging", map[string]any{
		"source": map[string]any{"object": h.url("pts.json"), "attribute": "au"},
		"target": map[string]any{"object": c.objectURL(objID), "attribute": map[string]any{"operation": "update", "reference": "attributes[?name=='lms1']"},
			"filter": map[string]any{"where": map[string]any{"type": "condition", "attribute": "attributes[?name=='domain']", "operator": "in", "values": []any{"LMS2"}}}},
		"variogram":    h.url("vario.json"),
		"neighborhood": neighbourhood(16),
	})
	require.NoError(t, err)
	require.Equal(t, "succeeded", job.Status, "%s", job.Error)
	merged := c.area.column(bmID, "lms1")
	for r := range dom {
		if dom[r] == "" {
			assert.True(t, math.IsNaN(merged[r]), "row %d", r)
		} else {
			assert.Equal(t, all[r], merged[r], "row %d", r)
		}
	}
	assert.Regexp(t, `\): updated column lms1$`, c.area.latest(bmID).Comment)
}

// The 422s of A.14.6 at submit: a task that does not take block models
// names the member and the kinds it accepts; an unknown column; an update
// of a non-float column; a create over a column of another type; a model
// missing from the workspace is invalid data naming block_model_uuid.
func TestBlockModelValidation(t *testing.T) {
	c := newBMCase(t, 1)
	h := c.h
	g, b := subBlocked(t)
	bmID, objID := c.area.createModel("val", g, b, stringColumn("domain", domains(b.NumRows())), floatColumn("cu", make([]float64, b.NumRows())))
	created := c.area.latest(bmID).VersionID
	base := "/compute/orgs/" + org + "/geostatistics/"
	kr := func(src, attr string, target map[string]any) []byte {
		return mustJSON(map[string]any{"parameters": map[string]any{
			"source": map[string]any{"object": src, "attribute": attr}, "target": target,
			"variogram": h.url("vario.json"), "neighborhood": neighbourhood(8)}})
	}
	bm := c.objectURL(objID)
	create := func(name string) map[string]any {
		return map[string]any{"object": bm, "attribute": map[string]any{"operation": "create", "name": name}}
	}
	params := func(p map[string]any) string { return fmt.Sprint(p["invalid-params"]) }

	p := problem(t, h, base+"normal-score", mustJSON(map[string]any{"parameters": map[string]any{"method": "forward",
		"source":       map[string]any{"object": bm, "attribute": "attributes[?name=='cu']"},
		"target":       map[string]any{"object": h.url("pts.json"), "attribute": map[string]any{"operation": "create", "name": "ns"}},
		"distribution": h.url("vario.json")}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:source")
	assert.Contains(t, params(p), "a block-model object cannot be used here (want pointset")

	p = problem(t, h, base+"break-ties", mustJSON(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": h.url("pts.json"), "attribute": "au"},
		"target": create("ties"), "seed": 1}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:target")
	assert.Contains(t, params(p), "a block-model object cannot be used here")

	p = problem(t, h, base+"kriging", kr(bm, "attributes[?name=='nope']", create("x")), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:source.attribute")
	assert.Contains(t, params(p), "no column")

	p = problem(t, h, base+"kriging", kr(h.url("pts.json"), "au", map[string]any{"object": bm,
		"attribute": map[string]any{"operation": "update", "reference": "attributes[?name=='domain']"}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:target.attribute.reference")
	assert.Contains(t, params(p), "only Float64 or Float32 columns can be updated")

	p = problem(t, h, base+"kriging", kr(h.url("pts.json"), "au", map[string]any{"object": bm,
		"attribute": map[string]any{"operation": "update", "reference": "attributes[?name=='missing']"}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:target.attribute.reference")

	p = problem(t, h, base+"kriging", kr(h.url("pts.json"), "au", create("Domain")), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:target.attribute.name")
	assert.Contains(t, params(p), "Utf8 column")

	p = problem(t, h, base+"kriging", kr(bm, "attributes[?name=='domain']", create("x")), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "not a continuous column")

	tf := create("f")
	tf["filter"] = map[string]any{"where": map[string]any{"type": "condition", "attribute": "attributes[?name=='zone']", "operator": "in", "values": []any{"A"}}}
	p = problem(t, h, base+"kriging", kr(h.url("pts.json"), "au", tf), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:target.filter")

	p = problem(t, h, base+"kriging", mustJSON(map[string]any{"parameters": map[string]any{
		"source": map[string]any{"object": h.url("pts.json"), "attribute": "au"}, "target": create("d"),
		"variogram": h.url("vario.json"), "neighborhood": neighbourhood(8), "outputs": []string{"variance"}}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, params(p), "name:outputs")

	// A viewer may read a block model, not write one (A.14.3 step 1).
	viewer := *h.c
	viewer.Token = viewerToken
	r, err := viewer.Do(h.ctx, http.MethodPost, base+"kriging", kr(h.url("pts.json"), "au", create("v")))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	assert.Contains(t, string(r.Body), "insufficient-role")

	// Nothing was written.
	assert.Equal(t, created, c.area.latest(bmID).VersionID)

	// A deleted model (or one of another workspace): invalid data.
	c.area.mu.Lock()
	c.area.models[bmID].deleted = true
	c.area.mu.Unlock()
	p = problem(t, h, base+"kriging", kr(h.url("pts.json"), "au", create("x")), http.StatusUnprocessableEntity, "/compute/invalid-data")
	assert.Contains(t, params(p), "name:target.block_model_uuid")
}

// With no block model area (a worker over a remote object store), a block
// model object is refused with 422 saying so.
func TestBlockModelNeedsEmbeddedArea(t *testing.T) {
	h := start(t, 1)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(20, 4)
	h.put(b, "pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(blockmodel.Size3D{NX: 2, NY: 2, NZ: 2}, blockmodel.XYZ{X: 10, Y: 10, Z: 10}))
	require.NoError(t, err)
	m := &testModel{name: "bm", geometry: g}
	doc := objectDoc("aaaaaaaa-0000-4000-8000-000000000001", m, &bmstore.Version{VersionUUID: "aaaaaaaa-0000-4000-8000-000000000002"})
	// Stored as the block model area stores it (not through the object
	// routes, which keep such objects for the area).
	_, err = h.app.Store().PutObject(h.ctx, store.Workspace{Org: org, ID: ws}, store.PutRequest{Path: "bm.json", Object: objecttest.JSON(doc),
		By: store.User{ID: "00000000-0000-4000-8000-0000000000aa", Name: "Owner"}})
	require.NoError(t, err)
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/knn", mustJSON(map[string]any{"parameters": map[string]any{
		"source":       map[string]any{"object": h.url("pts.json"), "attribute": "au"},
		"target":       map[string]any{"object": h.url("bm.json"), "attribute": map[string]any{"operation": "create", "name": "x"}},
		"neighborhood": neighbourhood(4)}}), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, fmt.Sprint(p["invalid-params"]), "block model objects need the embedded block model area")
}

// Four kriging jobs onto one model at once each add their column: the
// latest version has the four, each equal to the same kriging run alone
// onto the point set of the centroids, and the object lists them.
func TestConcurrentKrigingOntoOneBlockModel(t *testing.T) {
	c := newBMCase(t, 4)
	h := c.h
	g, b := subBlocked(t)
	bmID, objID := c.area.createModel("four", g, b)
	h.put(c.b, "centroids.json", c.b.Pointset("1.3.0", rowCentroids(b)))
	c.krige(t, h.url("centroids.json"), "est", nil, nil)
	pid := objectIDOf(t, h, "centroids.json")
	obj, blobs := h.latest(pid)
	want := h.column(obj, blobs, "est")

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job, err := h.c.RunTask(h.ctx, org, "kriging", map[string]any{
				"source":       map[string]any{"object": h.url("pts.json"), "attribute": "au"},
				"target":       map[string]any{"object": c.objectURL(objID), "attribute": map[string]any{"operation": "create", "name": fmt.Sprintf("cu_%d", i)}},
				"variogram":    h.url("vario.json"),
				"neighborhood": neighbourhood(16),
			})
			if err == nil && job.Status != "succeeded" {
				err = fmt.Errorf("job %s: %s", job.Status, job.Error)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	latest := c.area.latest(bmID)
	assert.Equal(t, 5, latest.VersionID, "one version per job")
	_, doc := latestDoc(t, h, objID)
	assert.Equal(t, latest.VersionUUID, doc["block_model_version_uuid"], "the object's latest version mirrors the model's")
	for i := range 4 {
		name := fmt.Sprintf("cu_%d", i)
		sameBits(t, want, c.area.column(bmID, name), name)
		assert.True(t, strings.Contains(fmt.Sprint(doc["attributes"]), name), "the object lists %s", name)
	}
}

// A sub-block set changed between the job's read and its write (a
// geometry-change update of the model meanwhile) fails the job with 422
// invalid-data "block model geometry changed", and nothing is written.
func TestBlockModelGeometryChangedWhileRunning(t *testing.T) {
	c := newBMCase(t, 1)
	h := c.h
	g, b := subBlocked(t)
	bmID, objID := c.area.createModel("geo", g, b)
	c.area.beforeWrite = func() {
		// Parent 1 was split in two along x: split it along y instead.
		parent, start, end := b.Columns()
		s, e := append([]uint8(nil), start...), append([]uint8(nil), end...)
		for r := range parent {
			if parent[r] == 1 {
				lo := s[3*r] == 0
				s[3*r], e[3*r] = 0, 2
				if lo {
					s[3*r+1], e[3*r+1] = 0, 1
				} else {
					s[3*r+1], e[3*r+1] = 1, 2
				}
			}
		}
		_, err := blockmodel.NewBlocks(g, parent, s, e)
		require.NoError(t, err)
		tx, err := c.area.store.Begin(bmID)
		require.NoError(t, err)
		for i, title := range bmjob.InternalColumns()[1:] {
			src, axis := s, i
			if i >= 3 {
				src, axis = e, i-3
			}
			u := make([]uint64, len(parent))
			for r := range u {
				u[r] = uint64(src[3*r+axis])
			}
			meta, _ := tx.Base().Column(title)
			w, err := tx.UpdateColumn(meta.ColID, true)
			require.NoError(t, err)
			require.NoError(t, w.Write(bmstore.Column{Type: blockmodel.UInt8, Uints: u}))
			require.NoError(t, w.Close())
		}
		_, err = tx.Commit(bmstore.Meta{Comment: "geometry change"})
		require.NoError(t, err)
	}
	p := runFails(t, h, "kriging", mustJSON(map[string]any{"parameters": map[string]any{
		"source":       map[string]any{"object": h.url("pts.json"), "attribute": "au"},
		"target":       map[string]any{"object": c.objectURL(objID), "attribute": map[string]any{"operation": "create", "name": "late"}},
		"variogram":    h.url("vario.json"),
		"neighborhood": neighbourhood(8)}}))
	invalidData(t, p, "geo", "block model geometry changed")
	latest := c.area.latest(bmID)
	assert.Equal(t, 2, latest.VersionID, "only the geometry change")
	_, has := latest.Column("late")
	assert.False(t, has)
}

// Memory admission counts a block model target's rows: kriging onto a
// regular model of 8,000,000 blocks is refused under a 64 MiB limit at
// submit, and onto a small one it runs.
func TestBlockModelAdmissionCountsRows(t *testing.T) {
	c := newBMCase(t, 1)
	h := c.h
	h.env.MaxMemory = 64 << 20
	big, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(blockmodel.Size3D{NX: 200, NY: 200, NZ: 200}, blockmodel.XYZ{X: 1, Y: 1, Z: 1}))
	require.NoError(t, err)
	_, bigObj := c.area.createModel("big", big, nil)
	small, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(blockmodel.Size3D{NX: 10, NY: 10, NZ: 2}, blockmodel.XYZ{X: 10, Y: 10, Z: 10}))
	require.NoError(t, err)
	_, smallObj := c.area.createModel("small", small, nil)
	body := func(obj string) []byte {
		return mustJSON(map[string]any{"parameters": map[string]any{
			"source":       map[string]any{"object": h.url("pts.json"), "attribute": "au"},
			"target":       map[string]any{"object": c.objectURL(obj), "attribute": map[string]any{"operation": "create", "name": "est"}},
			"variogram":    h.url("vario.json"),
			"neighborhood": neighbourhood(8)}})
	}
	p := problem(t, h, "/compute/orgs/"+org+"/geostatistics/kriging", body(bigObj), http.StatusUnprocessableEntity, "/compute/validation")
	assert.Contains(t, p["detail"], "GiB of memory")
	assert.Empty(t, h.jobs.List(org), "no job was created")
	c.krige(t, c.objectURL(smallObj), "est", nil, nil)
}
