package objects_test

import (
	"context"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/worker/objects"
	"github.com/geostat-engine/geostat/worker/objects/objecttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memberOf decodes doc and returns the member its error names.
func memberOf(t *testing.T, doc map[string]any) string {
	t.Helper()
	_, err := objects.Decode(objecttest.JSON(doc))
	require.Error(t, err)
	de := &objects.DataError{Err: err} // as the worker wraps a decode error
	p := de.Problem()
	m, _ := p.Extra["member"].(string)
	return m
}

// TestGeometryBoundsNameTheMember checks that a grid outside the bounds of
// the grid package, a malformed grid member and an absurd element width
// are decode errors naming the member, and that point coordinates beyond
// ±1e9 (or not finite) are data errors naming the coordinates element.
func TestGeometryBoundsNameTheMember(t *testing.T) {
	b := objecttest.NewBlobs()
	grid := func(edit func(map[string]any)) map[string]any {
		doc := b.Grid("1.3.0", objecttest.GridSpec{Size: [3]int{2, 2, 2}, CellSize: [3]float64{1, 1, 1}})
		edit(doc)
		return doc
	}
	for member, edit := range map[string]func(map[string]any){
		"origin":    func(d map[string]any) { d["origin"] = []any{1e308, 0, 0} },
		"cell_size": func(d map[string]any) { d["cell_size"] = []any{1, 1e19, 1} },
		"size":      func(d map[string]any) { d["size"] = []any{2, 2.5, 2} },
		"rotation":  func(d map[string]any) { d["rotation"] = map[string]any{"dip_azimuth": 400, "dip": 0, "pitch": 0} },
	} {
		assert.Equal(t, member, memberOf(t, grid(edit)), member)
	}
	wide := grid(func(d map[string]any) {
		d["cell_attributes"] = []any{map[string]any{"name": "e", "key": "k-e", "attribute_type": "ensemble_continuous",
			"values": objecttest.Element("0000000000000000000000000000000000000000000000000000000000000000", 8, 1<<40, "float64")}}
	})
	assert.Equal(t, "cell_attributes[0].values", memberOf(t, wide))

	ctx := context.Background()
	for _, bad := range []float64{1e308, -1e9 - 1, math.Inf(1), math.NaN()} {
		xyz := []float64{0, 0, 0, 1, 2, bad}
		doc := b.Pointset("1.3.0", []float64{0, 0, 0, 1, 2, 3})
		doc["locations"].(map[string]any)["coordinates"] = b.XYZ(xyz)
		o, err := objects.Decode(objecttest.JSON(doc))
		require.NoError(t, err)
		_, err = o.Locations(ctx, b)
		var de *objects.DataError
		require.ErrorAs(t, err, &de, "%v", bad)
		assert.Equal(t, "locations.coordinates", de.MemberName())
		assert.Contains(t, err.Error(), "row 1")
	}
	doc := b.Pointset("1.3.0", []float64{0, 0, 0, -1e9, 1e9, 3})
	o, err := objects.Decode(objecttest.JSON(doc))
	require.NoError(t, err)
	_, err = o.Locations(ctx, b)
	require.NoError(t, err, "±1e9 is within the bounds")
}
