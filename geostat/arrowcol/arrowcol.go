// Package arrowcol holds the zero-copy adapters between []float64 and Apache
// Arrow Float64 columns, for callers that hold their data as Arrow. The
// numerical packages (geostat, neighbor, kriging, tbsim, geostat/ties) work
// on plain []float64 and do not import Arrow; this package keeps Arrow out of
// their dependencies.
package arrowcol

import (
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Float64Array returns an Arrow Float64 array that views values without
// copying. NaN stays NaN (the array has no validity bitmap). The caller must
// keep values alive and unmodified while the array is in use; call Release
// on the array when done.
func Float64Array(values []float64) *array.Float64 {
	var b []byte
	if len(values) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*8)
	}
	data := array.NewData(arrow.PrimitiveTypes.Float64, len(values),
		[]*memory.Buffer{nil, memory.NewBufferBytes(b)}, nil, 0, 0)
	defer data.Release()
	return array.NewFloat64Data(data)
}

// Float64s returns the values of an Arrow Float64 array as a []float64. When
// the array has no nulls the result is a zero-copy view of its buffer (do not
// modify it); otherwise it is a copy with NaN in place of every null.
func Float64s(arr *array.Float64) []float64 {
	v := arr.Float64Values()
	if arr.NullN() == 0 {
		return v
	}
	out := make([]float64, len(v))
	for i := range v {
		if arr.IsNull(i) {
			out[i] = math.NaN()
		} else {
			out[i] = v[i]
		}
	}
	return out
}
