package objects

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// Writing a block column by column gives the bytes of writing it whole, and
// misuse is refused.
func TestWriteFloat64ColumnsAt(t *testing.T) {
	cols := [][]float64{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, {11, 12, 13, 14, 15}}
	open := func() *TableWriter {
		w, err := NewTableWriter(&bytes.Buffer{}, []DataType{TypeFloat64, TypeFloat64, TypeFloat64}, []string{"a", "b", "c"}, &WriteOptions{RowGroupRows: 3})
		require.NoError(t, err)
		return w
	}
	whole := open()
	require.NoError(t, whole.WriteFloat64Columns(cols))
	want, err := whole.Close()
	require.NoError(t, err)

	w := open()
	require.Equal(t, 3, w.GroupRoom())
	for _, rows := range [][2]int{{0, 3}, {3, 5}} {
		part := func(c int) []float64 { return cols[c][rows[0]:rows[1]] }
		require.NoError(t, w.WriteFloat64ColumnsAt(2, [][]float64{part(2)}))
		require.ErrorContains(t, w.WriteFloat64ColumnsAt(2, [][]float64{part(2)}), "column 2 of the block written twice")
		require.ErrorIs(t, w.WriteFloat64Columns(cols), errBlockOpen)
		require.NoError(t, w.WriteFloat64ColumnsAt(0, [][]float64{part(0), part(1)}))
	}
	require.Equal(t, 1, w.GroupRoom())
	got, err := w.Close()
	require.NoError(t, err)
	require.Equal(t, want, got)

	w = open()
	require.ErrorContains(t, w.WriteFloat64ColumnsAt(0, [][]float64{{1, 2, 3, 4}}), "does not fit the 3 rows left")
	require.ErrorContains(t, w.WriteFloat64ColumnsAt(2, [][]float64{{1}, {2}}), "columns [2, 4) not within [0, 3)")
	require.NoError(t, w.WriteFloat64ColumnsAt(0, [][]float64{{1}}))
	_, err = w.Close()
	require.ErrorContains(t, err, "closed with 1 of 3 columns")
}
