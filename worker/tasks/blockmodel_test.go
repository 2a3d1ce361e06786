package tasks

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmjob"
	"github.com/geostat-engine/geostat/worker/blockmodel/bmstore"
	"github.com/geostat-engine/geostat/worker/problem"
	"github.com/geostat-engine/geostat/worker/store"
)

// oneModel is a BlockModels of one regular model (writes unused).
type oneModel struct{ m *BlockModel }

func (o oneModel) Open(ctx context.Context, org, ws, id string) (*BlockModel, error) {
	if id != o.m.ModelID {
		return nil, ErrNotFound
	}
	return o.m, nil
}

func (o oneModel) WriteColumn(context.Context, *BlockModel, bmjob.ColumnWrite, store.User) (*BlockModelWrite, error) {
	panic("not used")
}

// TestBlockModelColumnForms: a block model column is named by every form
// of attribute expression (name, element path, key, index, bare title or
// col_id), titles case-insensitively when no exact match; another list is
// refused; a source reads the version the object names, and a version the
// model does not have is invalid data naming block_model_version_uuid.
func TestBlockModelColumnForms(t *testing.T) {
	ctx := context.Background()
	st, err := bmstore.Open(t.TempDir())
	require.NoError(t, err)
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.RegularSize(blockmodel.Size3D{NX: 2, NY: 1, NZ: 1}, blockmodel.XYZ{X: 1, Y: 1, Z: 1}))
	require.NoError(t, err)
	id := bmstore.NewUUID()
	tx, err := st.Create(bmstore.Model{ID: id}, 2)
	require.NoError(t, err)
	for _, title := range []string{"cu", "Au"} {
		w, err := tx.AddColumn(bmstore.ColumnMeta{Title: title, DataType: blockmodel.Float64})
		require.NoError(t, err)
		require.NoError(t, w.Write(bmstore.Column{Type: blockmodel.Float64, Floats: []float64{1, 2}}))
		require.NoError(t, w.Close())
	}
	v1, err := tx.Commit(bmstore.Meta{})
	require.NoError(t, err)
	env := &Env{BlockModels: oneModel{&BlockModel{Store: st, ModelID: id, Geometry: g}}}
	obj := &Version{Path: "bm.json", BlockModel: &BlockModelObject{ModelUUID: id, VersionUUID: v1.VersionUUID}}
	ref := ObjectRef{Org: "o", Workspace: "w"}
	e, err := openBlockModel(ctx, env, "source", obj, ref, false)
	require.NoError(t, err)
	au, _ := v1.Column("Au")
	for _, expr := range []string{"attributes[?name=='Au']", "/attributes/@name=Au", "attributes[?key=='" + au.ColID + "']",
		"attributes[1]", "attributes[-1]", "Au", "au", au.ColID, "attributes[?name=='AU']"} {
		c, err := e.column("source.attribute", expr)
		require.NoError(t, err, expr)
		assert.Equal(t, "Au", c.Title, expr)
	}
	_, err = e.column("source.attribute", "locations.attributes[?name=='cu']")
	assert.ErrorContains(t, err, "one attribute list, attributes")
	_, err = e.column("source.attribute", "attributes[?name=='ag']")
	assert.ErrorContains(t, err, `no column attributes[?name=='ag']`)

	obj.BlockModel.VersionUUID = bmstore.NewUUID()
	_, err = openBlockModel(ctx, env, "source", obj, ref, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has no version")
	var pe *problem.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, problem.ComputeInvalidData, pe.Type)
	assert.Equal(t, "source.block_model_version_uuid", pe.Extra["invalid-params"].([]InvalidParam)[0].Name)
	obj.BlockModel.ModelUUID = bmstore.NewUUID()
	_, err = openBlockModel(ctx, env, "target", obj, ref, true)
	assert.ErrorContains(t, err, "is not a block model of workspace w")
}

// TestExtentGroups: without discretisation, or with every row whole, one
// group of every row at the parent size; otherwise one group per extent
// in order of first appearance, rows in canonical order.
func TestExtentGroups(t *testing.T) {
	g, err := blockmodel.NewGeometry(blockmodel.XYZ{}, nil, blockmodel.SubBlockedSize(blockmodel.Flexible,
		blockmodel.Size3D{NX: 2, NY: 1, NZ: 1}, blockmodel.Size3D{NX: 2, NY: 1, NZ: 1}, blockmodel.XYZ{X: 4, Y: 2, Z: 1}))
	require.NoError(t, err)
	whole := extentGroups(g.WholeBlocks(), true)
	assert.Equal(t, []extentGroup{{extent: [3]float64{4, 2, 1}, all: true}}, whole)
	b, err := blockmodel.NewBlocks(g, []uint32{0, 0, 1}, []uint8{0, 0, 0, 1, 0, 0, 0, 0, 0}, []uint8{1, 1, 1, 2, 1, 1, 2, 1, 1})
	require.NoError(t, err)
	assert.Equal(t, []extentGroup{{extent: [3]float64{4, 2, 1}, all: true}}, extentGroups(b, false))
	assert.Equal(t, []extentGroup{{extent: [3]float64{2, 2, 1}, rows: []int{0, 1}}, {extent: [3]float64{4, 2, 1}, rows: []int{2}}}, extentGroups(b, true))
}
