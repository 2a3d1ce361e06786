package blockmodel

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/grid"
)

func TestDiscretisationOffsets(t *testing.T) {
	g := mustGeometry(t, XYZ{10, 20, 30}, rot("z", 45, "x", 30, "z", 10), RegularSize(Size3D{3, 2, 2}, XYZ{10, 20, 5}))
	gg, err := grid.New(g.origin, g.n, g.size, g.GridRotation())
	require.NoError(t, err)
	d := grid.BlockDiscretisation{NX: 3, NY: 2, NZ: 4}
	want := d.Offsets(gg)
	b := g.WholeBlocks()
	got := b.DiscretisationOffsets(5, d, nil)
	assert.Equal(t, want, got)
	allocs := testing.AllocsPerRun(20, func() { got = b.DiscretisationOffsets(3, d, got) })
	assert.Zero(t, allocs)

	// A sub-block is discretised by its own extent, around its centroid.
	sg := mustGeometry(t, XYZ{}, nil, SubBlockedSize(Flexible, Size3D{1, 1, 1}, Size3D{2, 2, 4}, XYZ{10, 10, 10}))
	sb, err := NewBlocks(sg, []uint32{0, 0, 0}, []uint8{0, 0, 0, 0, 1, 0, 0, 0, 2}, []uint8{2, 1, 2, 2, 2, 2, 2, 2, 4})
	require.NoError(t, err)
	off := sb.DiscretisationOffsets(1, grid.BlockDiscretisation{NX: 2, NY: 1, NZ: 1}, nil)
	assert.Equal(t, []float64{-2.5, 0, 0, 2.5, 0, 0}, off)
	assert.Equal(t, [3]float64{5, 7.5, 2.5}, sb.Centroid(1))
}

func TestSameRowsAndObjectGeometry(t *testing.T) {
	g := mustGeometry(t, XYZ{}, rot("x", 20), SubBlockedSize(FullySubBlocked, Size3D{2, 1, 1}, Size3D{2, 1, 1}, XYZ{1, 1, 1}))
	g2 := mustGeometry(t, XYZ{}, rot("x", 20), SubBlockedSize(FullySubBlocked, Size3D{2, 1, 1}, Size3D{2, 1, 1}, XYZ{1, 1, 1}))
	split, err := NewBlocks(g, []uint32{0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 2, 1, 1, 2, 1, 1})
	require.NoError(t, err)
	whole, err := NewBlocks(g2, []uint32{0, 1}, []uint8{0, 0, 0, 0, 0, 0}, []uint8{2, 1, 1, 2, 1, 1})
	require.NoError(t, err)
	assert.True(t, whole.SameRows(g.WholeBlocks()))
	assert.True(t, g.WholeBlocks().SameRows(g2.WholeBlocks()))
	assert.False(t, split.SameRows(g.WholeBlocks()))
	other := mustGeometry(t, XYZ{}, rot("x", 21), SubBlockedSize(FullySubBlocked, Size3D{2, 1, 1}, Size3D{2, 1, 1}, XYZ{1, 1, 1}))
	assert.False(t, other.WholeBlocks().SameRows(g.WholeBlocks()))

	out, err := json.Marshal(g.ObjectGeometry())
	require.NoError(t, err)
	assert.JSONEq(t, `{"model_type":"fully-sub-blocked","origin":[0,0,0],"n_parent_blocks":[2,1,1],"parent_block_size":[1,1,1],
		"n_subblocks_per_parent":[2,1,1],"rotation":{"dip_azimuth":0,"dip":20,"pitch":0}}`, string(out))
	r := mustGeometry(t, XYZ{1, 2, 3}, nil, RegularSize(Size3D{4, 3, 2}, XYZ{10, 20, 5}))
	out, err = json.Marshal(r.ObjectGeometry())
	require.NoError(t, err)
	assert.JSONEq(t, `{"model_type":"regular","origin":[1,2,3],"n_blocks":[4,3,2],"block_size":[10,20,5]}`, string(out))
}

func TestFullUserRoleName(t *testing.T) {
	var u FullUser
	require.NoError(t, json.Unmarshal([]byte(`{"id": "a", "role_name": "owner"}`), &u))
	assert.Equal(t, StringList{"owner"}, u.RoleName)
	require.NoError(t, json.Unmarshal([]byte(`{"id": "a", "role_name": ["owner", "editor"]}`), &u))
	assert.Equal(t, StringList{"owner", "editor"}, u.RoleName)
	assert.Error(t, json.Unmarshal([]byte(`{"id": "a", "role_name": 3}`), &u))
}
