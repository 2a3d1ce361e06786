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

// The bytes of a table depend on its values only, not on the blocks they
// were written in: several pages per column and row group (100,000 rows,
// row groups of 70,000, pages of 32,768 float64 values), written whole, in
// blocks of uneven sizes, and column by column in other blocks.
func TestFloat64BytesIndependentOfBlocks(t *testing.T) {
	const rows, width = 100_000, 3
	cols := make([][]float64, width)
	for c := range cols {
		cols[c] = make([]float64, rows)
		for i := range cols[c] {
			// Values of full precision, so that the pages do not compress
			// to the same bytes by chance.
			cols[c][i] = float64(i*(c+7)%9973) + 1/float64(i+c+3)
		}
	}
	types := []DataType{TypeFloat64, TypeFloat64, TypeFloat64}
	open := func() *TableWriter {
		w, err := NewTableWriter(&bytes.Buffer{}, types, []string{"a", "b", "c"}, &WriteOptions{RowGroupRows: 70_000})
		require.NoError(t, err)
		return w
	}
	slice := func(lo, hi int) [][]float64 {
		out := make([][]float64, width)
		for c := range out {
			out[c] = cols[c][lo:hi]
		}
		return out
	}
	whole := open()
	require.NoError(t, whole.WriteFloat64Columns(cols))
	want, err := whole.Close()
	require.NoError(t, err)

	blocks := open()
	for lo, i := 0, 0; lo < rows; i++ {
		hi := min(rows, lo+[]int{5_001, 12_345, 777, 30_000}[i%4])
		require.NoError(t, blocks.WriteFloat64Columns(slice(lo, hi)))
		lo = hi
	}
	got, err := blocks.Close()
	require.NoError(t, err)
	require.Equal(t, want, got, "uneven blocks")

	at := open()
	for lo, i := 0, 0; lo < rows; i++ {
		hi := min(rows, lo+[]int{9_999, 40_000, 3}[i%3], lo+at.GroupRoom())
		part := slice(lo, hi)
		require.NoError(t, at.WriteFloat64ColumnsAt(1, part[1:]))
		require.NoError(t, at.WriteFloat64ColumnsAt(0, part[:1]))
		lo = hi
	}
	got, err = at.Close()
	require.NoError(t, err)
	require.Equal(t, want, got, "column blocks")
}
