package bmstore

import (
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// appendValues appends the parquet-go values of rows [lo, hi) of c, column
// index col, to buf: a null (Null flag, NaN) has definition level 0. Tests
// write reference files with parquet-go's own writer through it.
func appendValues(buf []parquet.Value, c *Column, lo, hi, col int) []parquet.Value {
	for r := lo; r < hi; r++ {
		if c.IsNull(r) {
			buf = append(buf, parquet.Value{}.Level(0, 0, col))
			continue
		}
		var v parquet.Value
		switch c.Type {
		case blockmodel.Float64:
			v = parquet.DoubleValue(c.Floats[r])
		case blockmodel.Float16, blockmodel.Float32:
			v = parquet.FloatValue(float32(c.Floats[r]))
		case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Date32:
			v = parquet.Int32Value(int32(c.Ints[r]))
		case blockmodel.Int64, blockmodel.Timestamp:
			v = parquet.Int64Value(c.Ints[r])
		case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32:
			v = parquet.Int32Value(int32(uint32(c.Uints[r])))
		case blockmodel.UInt64:
			v = parquet.Int64Value(int64(c.Uints[r]))
		case blockmodel.Boolean:
			v = parquet.BooleanValue(c.Bools[r])
		case blockmodel.Utf8:
			s := c.Strings[r]
			v = parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
		}
		buf = append(buf, v.Level(0, 1, col))
	}
	return slices.Clip(buf)
}
