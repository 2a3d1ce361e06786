package bmstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// TestUint32Columns: a column holding its values in U32 reads, copies and
// grows as one holding them in Uints: Len, appendRange and appendFrom
// both ways, appendNull, reset; check refuses U32 for a 64-bit type or
// beside Uints.
func TestUint32Columns(t *testing.T) {
	wide := Column{Type: blockmodel.UInt32, Uints: []uint64{1, 4294967295, 7}, Null: []bool{false, false, true}}
	narrow := EmptyUint32Column(blockmodel.UInt32, 2)
	narrow.Null = []bool{}
	narrow.appendRange(&wide, 0, 3)
	narrow.appendNull()
	require.Equal(t, 4, narrow.Len())
	require.Nil(t, narrow.Uints)
	require.Equal(t, []uint32{1, 4294967295, 7, 0}, narrow.U32)
	require.NoError(t, narrow.check())

	back := newColumn(blockmodel.UInt32, 0)
	back.appendRange(&narrow, 1, 4)
	back.appendFrom(&narrow, 0)
	require.Equal(t, []uint64{4294967295, 7, 0, 1}, back.Uints)
	require.Equal(t, []bool{false, true, true, false}, back.Null)

	twin := EmptyUint32Column(blockmodel.UInt32, 0)
	twin.appendRange(&narrow, 0, 2)
	require.Equal(t, []uint32{1, 4294967295}, twin.U32)

	narrow.Reset()
	require.Equal(t, 0, narrow.Len())
	require.NotNil(t, narrow.U32, "still 32-bit after a reset")

	require.Error(t, (&Column{Type: blockmodel.UInt64, U32: []uint32{1}}).check())
	require.Error(t, (&Column{Type: blockmodel.UInt32, U32: []uint32{1}, Uints: []uint64{1}}).check())
}
