package blockmodel

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
)

func rot(pairs ...any) []RotationItem {
	var out []RotationItem
	for n := 0; n < len(pairs); n += 2 {
		out = append(out, RotationItem{Axis: pairs[n].(string), Angle: float64(pairs[n+1].(int))})
	}
	return out
}

// The test vectors of A.2.2.
func TestNormalizeRotationVectors(t *testing.T) {
	cases := []struct {
		items []RotationItem
		want  [3]float64
	}{
		{nil, [3]float64{0, 0, 0}},
		{rot("z", 30), [3]float64{30, 0, 0}},
		{rot("z", -30), [3]float64{330, 0, 0}},
		{rot("x", 20), [3]float64{0, 20, 0}},
		{rot("z", 45, "x", 30, "z", 10), [3]float64{45, 30, 10}},
		{rot("x", 30, "z", 45), [3]float64{0, 30, 45}},
		{rot("y", 90), [3]float64{270, 90, 90}},
		{rot("z", 120, "x", 180), [3]float64{120, 180, 0}},
		{rot("y", 30, "x", 20), [3]float64{306.052388732, 35.531347763, 59.357657952}},
	}
	for _, c := range cases {
		got := NormalizeRotation(c.items)
		for a := 0; a < 3; a++ {
			assert.InDelta(t, c.want[a], got[a], 1e-9, "%v angle %d: %v", c.items, a, got)
		}
		// Round trip: the angles rebuild the list's composite matrix.
		back := geostat.Rotation{DipAzimuth: got[0], Dip: got[1], Pitch: got[2]}.Matrix()
		comp := CompositeMatrix(c.items)
		for e := range back {
			assert.InDelta(t, comp[e], back[e], 1e-11, "%v element %d", c.items, e)
		}
	}
	// Literal Z-X-Z lists round-trip bit for bit.
	assert.Equal(t, [3]float64{45, 30, 10}, NormalizeRotation(rot("z", 45, "x", 30, "z", 10)))
	assert.Equal(t, [3]float64{330, 0, 0}, NormalizeRotation(rot("z", -30)))
	// A degenerate Z-X-Z list (d = 0) folds into the azimuth.
	n := NormalizeRotation(rot("z", 10, "x", 0, "z", 20))
	assert.InDelta(t, 30, n[0], 1e-9)
	assert.Equal(t, 0.0, n[2])
	// A negative dip is not taken literally.
	n = NormalizeRotation(rot("x", -20))
	assert.InDelta(t, 20, n[1], 1e-9)
}

func TestCompositeMatrixExample(t *testing.T) {
	want := geostat.Matrix3{0.707106781, 0.612372436, 0.353553391, -0.707106781, 0.612372436, 0.353553391, 0, -0.5, 0.866025404}
	got := CompositeMatrix(rot("z", 45, "x", 30))
	ref := geostat.Rotation{DipAzimuth: 45, Dip: 30}.Matrix()
	for e := range want {
		assert.InDelta(t, want[e], got[e], 1e-9, "element %d", e)
		assert.InDelta(t, ref[e], got[e], 1e-15, "element %d", e)
	}
	// Ry by analogy: a clockwise rotation about y.
	y := AxisMatrix("y", 90)
	x, _, z := y.Apply(0, 0, 1)
	assert.Equal(t, [2]float64{-1, 0}, [2]float64{x, z})
}

func mustGeometry(t *testing.T, origin XYZ, r []RotationItem, s SizeOptions) *Geometry {
	t.Helper()
	g, err := NewGeometry(origin, r, s)
	require.NoError(t, err)
	return g
}

// The worked example of A.2.3 and its bounding box (A.2.5).
func TestWorkedExampleCentroids(t *testing.T) {
	g := mustGeometry(t, XYZ{1000, 2000, 300}, rot("z", 45, "x", 30), RegularSize(Size3D{4, 3, 2}, XYZ{10, 20, 5}))
	cases := []struct {
		ijk  [3]uint32
		want [3]float64
	}{
		{[3]uint32{0, 0, 0}, [3]float64{1010.543142, 2003.472074, 297.165064}},
		{[3]uint32{1, 2, 0}, [3]float64{1042.109107, 2020.895904, 277.165064}},
		{[3]uint32{3, 2, 1}, [3]float64{1058.019010, 2008.521535, 281.495191}},
	}
	b := g.WholeBlocks()
	for _, c := range cases {
		got := g.ParentCentroid(c.ijk[0], c.ijk[1], c.ijk[2])
		for a := 0; a < 3; a++ {
			assert.InDelta(t, c.want[a], got[a], 1e-6, "%v", c.ijk)
		}
		row, ok := b.Locate(c.ijk[0], c.ijk[1], c.ijk[2], SubID{})
		require.True(t, ok)
		assert.Equal(t, int64(c.ijk[0])+4*(int64(c.ijk[1])+3*int64(c.ijk[2])), row)
		assert.Equal(t, got, b.Centroid(row))
		r2, ijk, ok := b.LocateXYZ(c.want[0], c.want[1], c.want[2], 0, 0, 0)
		require.True(t, ok)
		assert.Equal(t, row, r2)
		assert.Equal(t, c.ijk, ijk)
	}
	bb := g.BBox()
	assert.InDelta(t, 1000, bb.XMinMax.Min, 1e-6)
	assert.InDelta(t, 1068.562151, bb.XMinMax.Max, 1e-6)
	assert.InDelta(t, 1971.715729, bb.YMinMax.Min, 1e-6)
	assert.InDelta(t, 2040.277880, bb.YMinMax.Max, 1e-6)
	assert.InDelta(t, 270, bb.ZMinMax.Min, 1e-6)
	assert.InDelta(t, 308.660254, bb.ZMinMax.Max, 1e-6)

	g90 := mustGeometry(t, XYZ{1000, 2000, 300}, rot("z", 90), RegularSize(Size3D{4, 3, 2}, XYZ{10, 20, 5}))
	assert.Equal(t, [3]float64{1050, 1985, 302.5}, g90.ParentCentroid(1, 2, 0))
}

// The sub-block example of A.2.4.
func TestSubBlockExample(t *testing.T) {
	parents, sub, size := Size3D{2, 1, 1}, Size3D{2, 2, 4}, XYZ{10, 10, 10}
	for _, kind := range []ModelType{FullySubBlocked, Flexible, VariableOctree} {
		g := mustGeometry(t, XYZ{}, nil, SubBlockedSize(kind, parents, sub, size))
		s, e := g.WholeCorners()
		assert.Equal(t, uint32(0), g.Sidx(s))
		assert.Equal(t, [3]float64{15, 5, 5}, g.SubCentroid(1, 0, 0, s, e))
		assert.Equal(t, g.ParentCentroid(1, 0, 0), g.SubCentroid(1, 0, 0, s, e))
		assert.Equal(t, [3]float64{10, 10, 10}, g.SubExtent(s, e))
	}
	g := mustGeometry(t, XYZ{}, nil, SubBlockedSize(FullySubBlocked, parents, sub, size))
	s, e := [3]uint8{1, 0, 3}, [3]uint8{2, 1, 4}
	assert.Equal(t, uint32(13), g.Sidx(s))
	assert.Equal(t, s, g.SidxCell(13))
	assert.Equal(t, [3]float64{17.5, 2.5, 8.75}, g.SubCentroid(1, 0, 0, s, e))
	assert.Equal(t, [3]float64{5, 5, 2.5}, g.SubExtent(s, e))
	s, e = [3]uint8{0, 0, 2}, [3]uint8{2, 1, 4}
	assert.Equal(t, [3]float64{15, 2.5, 7.5}, g.SubCentroid(1, 0, 0, s, e))
	assert.Equal(t, [3]float64{10, 5, 5}, g.SubExtent(s, e))
}

func paramNames(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	var names []string
	for _, p := range ve.Params {
		assert.NotEmpty(t, p.Reason)
		names = append(names, p.Name)
	}
	return names
}

func TestDecodeSizeOptions(t *testing.T) {
	s, err := DecodeSizeOptions(json.RawMessage(`{"n_blocks": {"nx": 25.0, "ny": 3, "nz": 2}, "block_size": {"x": 10, "y": 20.5, "z": 5}, "other": 1}`), "size_options")
	require.NoError(t, err)
	assert.Equal(t, RegularSize(Size3D{25, 3, 2}, XYZ{10, 20.5, 5}), s)

	s, err = DecodeSizeOptions(json.RawMessage(`{"model_type": "variable-octree", "n_parent_blocks": {"nx": 2, "ny": 3, "nz": 4},
		"n_subblocks_per_parent": {"nx": 8, "ny": 1, "nz": 64}, "parent_block_size": {"x": 1, "y": 2, "z": 3}, "n_blocks": null}`), "size_options")
	require.NoError(t, err)
	assert.Equal(t, SubBlockedSize(VariableOctree, Size3D{2, 3, 4}, Size3D{8, 1, 64}, XYZ{1, 2, 3}), s)
	assert.Equal(t, [3]int{8, 1, 64}, s.Subblocks())

	var viaJSON SizeOptions
	require.NoError(t, json.Unmarshal([]byte(`{"model_type":"flexible","n_parent_blocks":{"nx":1,"ny":1,"nz":1},"n_subblocks_per_parent":{"nx":100,"ny":3,"nz":1},"parent_block_size":{"x":1,"y":1,"z":1}}`), &viaJSON))
	assert.Equal(t, Flexible, viaJSON.ModelType)
	out, err := json.Marshal(viaJSON)
	require.NoError(t, err)
	assert.JSONEq(t, `{"model_type":"flexible","n_parent_blocks":{"nx":1,"ny":1,"nz":1},"n_subblocks_per_parent":{"nx":100,"ny":3,"nz":1},"parent_block_size":{"x":1,"y":1,"z":1}}`, string(out))

	bad := []struct {
		body  string
		names []string
	}{
		{`[]`, []string{"size_options"}},
		{`{"model_type": "octree"}`, []string{"size_options.model_type"}},
		{`{"model_type": 3}`, []string{"size_options.model_type"}},
		{`{"model_type": "regular", "n_blocks": {"nx": 1, "ny": 1, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}, "n_subblocks_per_parent": {"nx": 2, "ny": 2, "nz": 2}}`,
			[]string{"size_options.n_subblocks_per_parent"}},
		{`{"model_type": "flexible", "n_blocks": {"nx": 1, "ny": 1, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}}`,
			[]string{"size_options.n_blocks", "size_options.block_size", "size_options.n_parent_blocks", "size_options.n_subblocks_per_parent", "size_options.parent_block_size"}},
		{`{"n_blocks": {"nx": 1.5, "ny": 0, "nz": "2"}, "block_size": {"x": 0, "y": 1e6, "z": 1}}`,
			[]string{"size_options.n_blocks.nx", "size_options.n_blocks.ny", "size_options.n_blocks.nz", "size_options.block_size.x", "size_options.block_size.y"}},
		{`{"n_blocks": 3, "block_size": {"x": 1, "z": 1}}`, []string{"size_options.n_blocks", "size_options.block_size.y"}},
		{`{"n_blocks": {"nx": 1, "ny": 1, "nz": 1}, "block_size": {"x": 0, "y": 1e6, "z": -1}}`,
			[]string{"size_options.block_size.x", "size_options.block_size.y", "size_options.block_size.z"}},
		{`{"n_blocks": {"nx": 1000, "ny": 1000, "nz": 501}, "block_size": {"x": 1, "y": 1, "z": 1}}`, []string{"size_options.n_blocks"}},
		{`{"n_blocks": {"nx": 500000001, "ny": 1, "nz": 1}, "block_size": {"x": 1, "y": 1, "z": 1}}`, []string{"size_options.n_blocks.nx"}},
		{`{"model_type": "variable-octree", "n_parent_blocks": {"nx": 1, "ny": 1, "nz": 1}, "n_subblocks_per_parent": {"nx": 3, "ny": 128, "nz": 0}, "parent_block_size": {"x": 1, "y": 1, "z": 1}}`,
			[]string{"size_options.n_subblocks_per_parent.nx", "size_options.n_subblocks_per_parent.ny", "size_options.n_subblocks_per_parent.nz"}},
		{`{"model_type": "fully-sub-blocked", "n_parent_blocks": {"nx": 1, "ny": 1, "nz": 1}, "n_subblocks_per_parent": {"nx": 101, "ny": 100, "nz": 3}, "parent_block_size": {"x": 1, "y": 1}}`,
			[]string{"size_options.n_subblocks_per_parent.nx", "size_options.parent_block_size.z"}},
	}
	for _, c := range bad {
		_, err := DecodeSizeOptions(json.RawMessage(c.body), "size_options")
		require.Error(t, err, c.body)
		assert.ElementsMatch(t, c.names, paramNames(t, err), c.body)
	}
	// 1000 × 1000 × 500 is exactly the limit.
	_, err = DecodeSizeOptions(json.RawMessage(`{"n_blocks": {"nx": 1000, "ny": 1000, "nz": 500}, "block_size": {"x": 1, "y": 1, "z": 1}}`), "size_options")
	require.NoError(t, err)
}

func TestValidateRotation(t *testing.T) {
	require.NoError(t, ValidateRotation(nil, "block_rotation"))
	require.NoError(t, ValidateRotation(rot("z", 359, "x", -359, "z", 0), "block_rotation"))
	err := ValidateRotation([]RotationItem{{"z", 10}, {"z", 20}, {"w", 360}, {"x", math.NaN()}}, "block_rotation")
	assert.ElementsMatch(t, []string{"block_rotation", "block_rotation[1].axis", "block_rotation[2].axis", "block_rotation[2].angle", "block_rotation[3].angle"}, paramNames(t, err))

	items, err := DecodeRotation(json.RawMessage(`[{"axis": "x", "angle": 20.0}, {"axis": "z", "angle": -30}]`), "block_rotation")
	require.NoError(t, err)
	assert.Equal(t, rot("x", 20, "z", -30), items)
	items, err = DecodeRotation(json.RawMessage(`null`), "block_rotation")
	require.NoError(t, err)
	assert.Empty(t, items)
	_, err = DecodeRotation(json.RawMessage(`[{"axis": "x"}, 3, {"axis": "y", "angle": -360}]`), "block_rotation")
	assert.ElementsMatch(t, []string{"block_rotation[0].angle", "block_rotation[1]"}, paramNames(t, err))
	_, err = DecodeRotation(json.RawMessage(`[{"axis": "x", "angle": 1}, {"axis": "y", "angle": -360}]`), "block_rotation")
	assert.ElementsMatch(t, []string{"block_rotation[1].angle"}, paramNames(t, err))
}

func TestNewGeometryNamesMembers(t *testing.T) {
	_, err := NewGeometry(XYZ{math.Inf(1), 0, math.NaN()}, rot("q", 1), SizeOptions{ModelType: Regular})
	assert.ElementsMatch(t, []string{"model_origin.x", "model_origin.z", "block_rotation[0].axis", "size_options.n_blocks", "size_options.block_size"}, paramNames(t, err))
	_, err = DecodeXYZ(json.RawMessage(`{"x": 1, "y": "a"}`), "model_origin")
	assert.ElementsMatch(t, []string{"model_origin.y", "model_origin.z"}, paramNames(t, err))
}

func TestResolveXYZTolerance(t *testing.T) {
	g := mustGeometry(t, XYZ{100, 200, 300}, rot("z", 30, "x", 10), SubBlockedSize(Flexible, Size3D{3, 2, 2}, Size3D{4, 4, 4}, XYZ{8, 8, 4}))
	s, e := [3]uint8{1, 0, 2}, [3]uint8{3, 1, 4}
	c := g.SubCentroid(2, 1, 0, s, e)
	d := g.SubExtent(s, e)
	i, j, k, s2, e2, ok := g.ResolveXYZ(c[0], c[1], c[2], d[0], d[1], d[2])
	require.True(t, ok)
	assert.Equal(t, [3]uint32{2, 1, 0}, [3]uint32{i, j, k})
	assert.Equal(t, s, s2)
	assert.Equal(t, e, e2)
	// Within 1e-3 of the sub-block extent along a model axis: still a match.
	r := g.Matrix()
	shift := func(a int, by float64) [3]float64 {
		return [3]float64{c[0] + r[a]*by, c[1] + r[3+a]*by, c[2] + r[6+a]*by}
	}
	p := shift(0, 0.9e-3*d[0])
	_, _, _, _, _, ok = g.ResolveXYZ(p[0], p[1], p[2], d[0], d[1], d[2])
	assert.True(t, ok)
	p = shift(0, 1.2e-3*d[0])
	_, _, _, _, _, ok = g.ResolveXYZ(p[0], p[1], p[2], d[0], d[1], d[2])
	assert.False(t, ok)
	_, _, _, _, _, ok = g.ResolveXYZ(c[0], c[1], c[2], d[0]*1.002, d[1], d[2])
	assert.False(t, ok)
	_, _, _, _, _, ok = g.ResolveXYZ(c[0], c[1], c[2], d[0]*1.0009, d[1], d[2])
	assert.True(t, ok)
	// Outside the model.
	p = g.LocalToWorld(-1, 1, 1)
	_, _, _, _, _, ok = g.ResolveXYZ(p[0], p[1], p[2], 2, 2, 1)
	assert.False(t, ok)
}

func TestSizeOptionsValidateForeignMembers(t *testing.T) {
	s := RegularSize(Size3D{1, 1, 1}, XYZ{1, 1, 1})
	s.NSubblocksPerParent = &Size3D{2, 2, 2}
	assert.Equal(t, []string{"size_options.n_subblocks_per_parent"}, paramNames(t, s.Validate("size_options")))
	f := SubBlockedSize(Flexible, Size3D{1, 1, 1}, Size3D{2, 2, 2}, XYZ{1, 1, 1})
	f.BlockSize = &XYZ{1, 1, 1}
	assert.Equal(t, []string{"size_options.block_size"}, paramNames(t, f.Validate("size_options")))
	assert.Equal(t, []string{"size_options.model_type"}, paramNames(t, SizeOptions{ModelType: "octree"}.Validate("size_options")))
}
