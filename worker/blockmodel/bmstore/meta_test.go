package bmstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// TestReservedVersionUUIDAndClearUnit: a commit takes the caller's reserved
// version uuid (A.7.1 version_uuid), and ClearUnit removes a unit
// (update_metadata unit_id null), which SetColumnMeta cannot.
func TestReservedVersionUUIDAndClearUnit(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	tx, err := s.Create(Model{ID: "m"}, 2)
	require.NoError(t, err)
	unit := "m"
	w, err := tx.AddColumn(ColumnMeta{Title: "a", DataType: blockmodel.Float64, UnitID: &unit})
	require.NoError(t, err)
	require.NoError(t, w.Write(Column{Type: blockmodel.Float64, Floats: []float64{1, 2}}))
	require.NoError(t, w.Close())
	v1, err := tx.Commit(Meta{})
	require.NoError(t, err)
	require.NotEmpty(t, v1.VersionUUID)

	tx, err = s.Begin("m")
	require.NoError(t, err)
	require.NoError(t, tx.ClearUnit(v1.Columns[0].ColID))
	reserved := NewUUID()
	v2, err := tx.Commit(Meta{VersionUUID: reserved})
	require.NoError(t, err)
	require.Equal(t, reserved, v2.VersionUUID)
	got, err := s.Version("m", 2)
	require.NoError(t, err)
	require.Equal(t, reserved, got.VersionUUID)
	require.Nil(t, got.Columns[0].UnitID)
	require.Equal(t, []MetaUpdated{{Title: "a", Values: map[string]any{"unit_id": nil}}}, got.Changes.MetadataUpdated)
}

// TestInternalColumnsNotInChanges: rewriting or deleting an internal column
// (the sub-block identity a geometry change rewrites) is not a user-visible
// change: it appears in no changes list nor in the delta check's ids.
func TestInternalColumnsNotInChanges(t *testing.T) {
	s, err := Open(t.TempDir())
	require.NoError(t, err)
	tx, err := s.Create(Model{ID: "m"}, 2)
	require.NoError(t, err)
	for _, title := range []string{"sys:a", "sys:b"} {
		w, err := tx.AddColumn(ColumnMeta{Title: title, DataType: blockmodel.UInt32, Internal: true})
		require.NoError(t, err)
		require.NoError(t, w.Write(Column{Type: blockmodel.UInt32, Uints: []uint64{1, 2}}))
		require.NoError(t, w.Close())
	}
	v1, err := tx.Commit(Meta{})
	require.NoError(t, err)
	tx, err = s.Begin("m")
	require.NoError(t, err)
	w, err := tx.UpdateColumn(v1.Columns[0].ColID, true)
	require.NoError(t, err)
	require.NoError(t, w.Write(Column{Type: blockmodel.UInt32, Uints: []uint64{3, 4}}))
	require.NoError(t, w.Close())
	require.NoError(t, tx.DeleteColumn(v1.Columns[1].ColID))
	v2, err := tx.Commit(Meta{})
	require.NoError(t, err)
	require.Empty(t, v2.Changes.Updated)
	require.Empty(t, v2.Changes.UpdatedIDs)
	require.Empty(t, v2.Changes.Deleted)
	require.Empty(t, v2.Changes.DeletedIDs)
	require.Len(t, v2.Columns, 1)
}
