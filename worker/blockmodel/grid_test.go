package blockmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// A regular model and a regular-3d-grid of the same geometry (the grid's
// rotation being the model's GridRotation, i.e. normalized_rotation as
// dip_azimuth, dip, pitch) have bit-identical cell centres and bounding
// boxes, rotated or not; a list already in Z-X-Z form gives the grid of its
// own angles.
func TestRegularModelEqualsGrid(t *testing.T) {
	cases := []struct {
		items []blockmodel.RotationItem
		same  bool // the list is [z a, x d, z p] literally
	}{
		{nil, true},
		{[]blockmodel.RotationItem{{Axis: "z", Angle: 30}}, true},
		{[]blockmodel.RotationItem{{Axis: "z", Angle: 90}}, true},
		{[]blockmodel.RotationItem{{Axis: "z", Angle: 45}, {Axis: "x", Angle: 30}}, true},
		{[]blockmodel.RotationItem{{Axis: "z", Angle: 45}, {Axis: "x", Angle: 30}, {Axis: "z", Angle: 10}}, true},
		{[]blockmodel.RotationItem{{Axis: "z", Angle: 123.4}, {Axis: "x", Angle: 67.8}, {Axis: "z", Angle: 291.2}}, true},
		{[]blockmodel.RotationItem{{Axis: "y", Angle: 30}, {Axis: "x", Angle: 20}}, false},
		{[]blockmodel.RotationItem{{Axis: "x", Angle: -15}, {Axis: "y", Angle: 40}, {Axis: "z", Angle: 200}}, false},
	}
	origin := blockmodel.XYZ{X: 431234.5, Y: 6912345.25, Z: -120.125}
	n := blockmodel.Size3D{NX: 7, NY: 5, NZ: 4}
	size := blockmodel.XYZ{X: 12.5, Y: 7.3, Z: 3.1}
	for _, c := range cases {
		g, err := blockmodel.NewGeometry(origin, c.items, blockmodel.RegularSize(n, size))
		require.NoError(t, err)
		gr := g.GridRotation()
		if c.same {
			var want [3]float64
			switch len(c.items) {
			case 1:
				want[0] = c.items[0].Angle
			case 2:
				want[0], want[1] = c.items[0].Angle, c.items[1].Angle
			case 3:
				want = [3]float64{c.items[0].Angle, c.items[1].Angle, c.items[2].Angle}
			}
			assert.Equal(t, want, [3]float64{gr.DipAzimuth, gr.Dip, gr.Pitch}, "%v", c.items)
		}
		gg, err := grid.New(origin.Array(), [3]int{n.NX, n.NY, n.NZ}, size.Array(), gr)
		require.NoError(t, err)
		want := gg.CellCentres(nil)

		b := g.WholeBlocks()
		var batch blockmodel.SystemBatch
		require.NoError(t, b.FillSystem(0, b.NumRows(), &batch))
		for r := 0; r < gg.NumCells(); r++ {
			i, j, k := gg.IJK(r)
			p := g.ParentCentroid(uint32(i), uint32(j), uint32(k))
			require.Equal(t, want[3*r:3*r+3], p[:], "%v cell %d", c.items, r)
			require.Equal(t, want[3*r:3*r+3], []float64{batch.X[r], batch.Y[r], batch.Z[r]}, "%v row %d", c.items, r)
			require.Equal(t, [3]uint32{uint32(i), uint32(j), uint32(k)}, [3]uint32{batch.I[r], batch.J[r], batch.K[r]})
		}
		lo, hi := gg.BoundingBox()
		bb := g.BBox()
		assert.Equal(t, [3]float64{bb.XMinMax.Min, bb.YMinMax.Min, bb.ZMinMax.Min}, lo)
		assert.Equal(t, [3]float64{bb.XMinMax.Max, bb.YMinMax.Max, bb.ZMinMax.Max}, hi)

		// Whole sub-blocked parents are the grid's cells too.
		sg, err := blockmodel.NewGeometry(origin, c.items, blockmodel.SubBlockedSize(blockmodel.Flexible, n, blockmodel.Size3D{NX: 3, NY: 7, NZ: 2}, size))
		require.NoError(t, err)
		sb := sg.WholeBlocks()
		for r := int64(0); r < sb.NumRows(); r++ {
			p := sb.Centroid(r)
			require.Equal(t, want[3*r:3*r+3], p[:])
			i, j, k := sg.ParentIJK(r)
			s, e := sg.WholeCorners()
			p = sg.SubCentroid(i, j, k, s, e)
			require.Equal(t, want[3*r:3*r+3], p[:])
			require.Equal(t, size.Array(), sb.Extent(r))
		}
	}
}
