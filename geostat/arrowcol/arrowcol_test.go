package arrowcol

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArrowZeroCopy(t *testing.T) {
	vals := []float64{1, math.NaN(), 3.5, -2}
	arr := Float64Array(vals)
	defer arr.Release()
	require.Equal(t, 4, arr.Len())
	assert.Equal(t, 0, arr.NullN())
	assert.Equal(t, 3.5, arr.Value(2))
	assert.True(t, math.IsNaN(arr.Value(1)))
	// Zero copy both ways: a write through the slice shows in the array.
	vals[0] = 42
	assert.Equal(t, 42.0, arr.Value(0))
	back := Float64s(arr)
	assert.Same(t, &vals[0], &back[0])

	empty := Float64Array(nil)
	defer empty.Release()
	assert.Equal(t, 0, empty.Len())
	assert.Empty(t, Float64s(empty))
}

func TestFloat64sNullsBecomeNaN(t *testing.T) {
	b := array.NewFloat64Builder(memory.NewGoAllocator())
	defer b.Release()
	b.AppendValues([]float64{1, 0, 3}, []bool{true, false, true})
	arr := b.NewFloat64Array()
	defer arr.Release()
	got := Float64s(arr)
	assert.Equal(t, 1.0, got[0])
	assert.True(t, math.IsNaN(got[1]))
	assert.Equal(t, 3.0, got[2])
}
