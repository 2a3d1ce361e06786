package tasks_test

import (
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/require"
)

// namedColumn reads the single column of the attribute of list whose name is
// exactly name (by comparison, not through an expression).
func namedColumn(t *testing.T, h *harness, obj *objects.Object, blobs *objecttest.Blobs, list, name string) []float64 {
	t.Helper()
	for _, a := range obj.Attributes(list) {
		if a.Name == name {
			cols, err := obj.ReadContinuous(h.ctx, blobs, &a)
			require.NoError(t, err)
			require.Len(t, cols, 1)
			return cols[0]
		}
	}
	require.Failf(t, "attribute not found", "no %s attribute named %q", list, name)
	return nil
}

// Attribute names are the user's: a name with dots, path-like names, spaces
// and non-ASCII letters are written as given by knn, kriging and idw, and
// their values read back (the Parquet column names are fixed, so a dot in
// the name no longer fails the job with "invalid name").
func TestTaskAttributeNamesAsGiven(t *testing.T) {
	h := start(t, 2)
	b := objecttest.NewBlobs()
	xyz, grade := sampleData(200, 9)
	h.put(b, "names/pts.json", b.Pointset("1.3.0", xyz, b.Scalar("au", "k-au", grade)))
	vdoc := objecttest.Variogram("1.2.0")
	h.put(b, "names/vario.json", vdoc)
	spec := objecttest.GridSpec{Size: [3]int{6, 6, 2}, CellSize: [3]float64{16, 16, 10}}
	gid := h.put(b, "names/grid.json", b.Grid("1.3.0", spec))

	g, err := grid.New(spec.Origin, spec.Size, spec.CellSize, geostat.Rotation{})
	require.NoError(t, err)
	centres := g.CellCentres(nil)
	search := neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 40, Minor: 15}, MaxSamples: 12}
	ix, err := neighbor.NewIndex(xyz, grade, nil, search)
	require.NoError(t, err)
	wantKNN := make([]float64, g.NumCells())
	require.NoError(t, ix.Mean(h.ctx, grade, centres, wantKNN, nil))
	vobj, err := objects.Decode(objecttest.JSON(vdoc))
	require.NoError(t, err)
	dv, err := vobj.DecodeVariogram()
	require.NoError(t, err)
	k, err := kriging.New(xyz, grade, kriging.Params{Variogram: dv.Variogram, Method: kriging.Ordinary, Search: search})
	require.NoError(t, err)
	wantOK := kriging.Output{Estimate: make([]float64, g.NumCells()), Variance: make([]float64, g.NumCells())}
	require.NoError(t, k.Estimate(h.ctx, centres, &wantOK, nil))

	source := map[string]any{"object": h.url("names/pts.json"), "attribute": "locations.attributes[?name=='au']"}
	target := func(name string) map[string]any {
		return map[string]any{"object": h.url("names/grid.json"), "attribute": map[string]any{"operation": "create", "name": name}}
	}
	for _, base := range []string{"cu.knn", "cu_ok_v1.2", "..", "../x", "teneur en or", "品位 Au≥0.5 g/t"} {
		t.Run(base, func(t *testing.T) {
			names := map[string]string{"knn": base + " knn", "kriging": base + " ok", "idw": base + " idw"}
			if base == ".." || base == "../x" {
				// The exact name, not a suffixed one, for one task each.
				names = map[string]string{"knn": base, "kriging": base + "/ok", "idw": base + "."}
			}
			for _, task := range []string{"knn", "kriging", "idw"} {
				params := map[string]any{"source": source, "target": target(names[task]), "neighborhood": neighbourhood(12)}
				switch task {
				case "kriging":
					params["variogram"] = h.url("names/vario.json")
					params["outputs"] = []string{"variance"}
				case "idw":
					params["power"] = 2.0
				}
				job, err := h.c.RunTask(h.ctx, org, task, params)
				require.NoError(t, err)
				require.Equal(t, "succeeded", job.Status, "%s %q: %s", task, names[task], job.Error)
			}
			obj, blobs := h.latest(gid)
			assertSameFloats(t, wantKNN, namedColumn(t, h, obj, blobs, objects.ListCellAttributes, names["knn"]))
			assertSameFloats(t, wantOK.Estimate, namedColumn(t, h, obj, blobs, objects.ListCellAttributes, names["kriging"]))
			assertSameFloats(t, wantOK.Variance, namedColumn(t, h, obj, blobs, objects.ListCellAttributes, names["kriging"]+"_variance"))
			require.Len(t, namedColumn(t, h, obj, blobs, objects.ListCellAttributes, names["idw"]), g.NumCells())
		})
	}
}
