package objects

import (
	"fmt"
)

// DataType is the logical type of the values of an array element
// (docs/objects.md 1.3, the element's "data_type").
type DataType string

// The data types the worker reads and writes. Timestamp and uint32 (colour)
// arrays are not used by any object kind the worker models and are rejected.
const (
	TypeFloat64 DataType = "float64"
	TypeBool    DataType = "bool"
	TypeInt32   DataType = "int32"
	TypeInt64   DataType = "int64"
	TypeUint64  DataType = "uint64"
	TypeString  DataType = "string"
)

// valid reports whether t is one of the supported data types.
func (t DataType) valid() bool {
	switch t {
	case TypeFloat64, TypeBool, TypeInt32, TypeInt64, TypeUint64, TypeString:
		return true
	}
	return false
}

// Column is one column of a table read from or written to a Parquet blob.
// Exactly one of the value slices is used, chosen by Type: Float64 for
// float64, Bool for bool, Int64 for int32 and int64 (int32 values are widened),
// Uint64 for uint64 and String for string.
type Column struct {
	Type    DataType
	Float64 []float64
	Bool    []bool
	Int64   []int64
	Uint64  []uint64
	String  []string
	// Null marks rows without a value (Parquet nulls). It is nil when the
	// column has no nulls. For float64 columns a null row also holds NaN.
	Null []bool
}

// Len returns the number of rows of the column.
func (c *Column) Len() int {
	switch c.Type {
	case TypeFloat64:
		return len(c.Float64)
	case TypeBool:
		return len(c.Bool)
	case TypeInt32, TypeInt64:
		return len(c.Int64)
	case TypeUint64:
		return len(c.Uint64)
	case TypeString:
		return len(c.String)
	}
	return 0
}

// HasNulls reports whether any row of the column is null.
func (c *Column) HasNulls() bool {
	for _, n := range c.Null {
		if n {
			return true
		}
	}
	return false
}

// Table is the content of one Parquet blob: a fixed number of rows and a list
// of top-level columns in file order (order is normative, names are not;
// docs/objects.md 3).
type Table struct {
	Rows    int64
	Columns []Column
}

// TableSpec is what the JSON array element promises about its blob: the types
// of the columns in order and the number of rows. Element is the JSON path of
// the element, used to name it in errors (e.g. "locations.coordinates").
type TableSpec struct {
	Element string
	Types   []DataType
	Rows    int64
}

// Float64Spec returns the spec of a width-column float64 array element with
// the given number of rows.
func Float64Spec(element string, width int, rows int64) TableSpec {
	return TableSpec{Element: element, Types: Float64Types(width), Rows: rows}
}

// Float64Columns returns the columns of a table that has only float64 columns.
// Null rows are NaN. It returns an error naming element when a column is not
// float64, or when nulls are present and allowNull is false.
func (t *Table) Float64Columns(element string, allowNull bool) ([][]float64, error) {
	out := make([][]float64, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Type != TypeFloat64 {
			return nil, fmt.Errorf("%s: column %d is %s, want float64", element, i, c.Type)
		}
		if !allowNull && c.HasNulls() {
			return nil, fmt.Errorf("%s: column %d contains nulls", element, i)
		}
		out[i] = c.Float64
	}
	return out, nil
}

// InterleaveXYZ returns the three columns x, y, z as one flat slice
// x0,y0,z0,x1,... (the project's flat coordinate layout). It panics if the
// columns differ in length (a broken invariant of a checked table).
func InterleaveXYZ(x, y, z []float64) []float64 {
	if len(y) != len(x) || len(z) != len(x) {
		panic("objects: InterleaveXYZ: columns differ in length")
	}
	out := make([]float64, 3*len(x))
	for i := range x {
		out[3*i] = x[i]
		out[3*i+1] = y[i]
		out[3*i+2] = z[i]
	}
	return out
}
