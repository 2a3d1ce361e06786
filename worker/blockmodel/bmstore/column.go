// Package bmstore is the durable column store of the block model area: a
// model is a table of N rows (row index 0..N-1 in the geometry's canonical
// order) with user columns and caller-named internal columns (sub-block
// identity), kept as immutable numbered versions.
//
// Layout under the root directory given to Open:
//
//	jobs/<job_id>.json                 job records (A.6)
//	models/<model_id>/model.json       model record (replaced atomically)
//	models/<model_id>/latest           number of the latest committed version
//	models/<model_id>/v/<n>.json       immutable manifest of version n
//	models/<model_id>/c/<n>-<col>.parquet  column data written by version n
//	models/<model_id>/tmp/             temporary files, cleared at Open
//
// Every file is written to tmp/, fsynced, renamed into place and its
// directory fsynced. A commit writes its column files, then its manifest,
// then the latest pointer: the pointer's rename is the commit point, so a
// crash at any point leaves the previous latest version intact. Open removes
// manifests above the pointer and column files no committed manifest refers
// to. A version records only what changed: a column added writes one file,
// unchanged columns are referenced by the manifest, not copied. The per-row
// version_id is kept as a column file, or as a constant when every row was
// written by one version.
//
// A column file is a Parquet file of one OPTIONAL column named "v" (a null
// is a definition level 0, a NaN float is stored as a null), in row groups
// of 262,144 rows; any Parquet reader reads it. The store writes its files
// and query outputs itself (pqwrite.go): data pages v1 written straight
// from the typed slices of Column, floats dictionary-encoded when a chunk
// has few distinct values and otherwise PLAIN, both uncompressed, other
// types PLAIN with Snappy pages; row groups are encoded on several
// goroutines. Files of that layout are read by the store's own page
// decoder (pqpage.go: levels and values straight into Column, no buffer a
// page); a chunk of any other (zstd or data pages v2 in files written
// before, another encoding) is read a page of typed values at a time
// through parquet-go (no parquet.Value a row).
//
// blockmodel.Float16 columns are stored with blockmodel.Float32 physical type (parquet-go has no
// public FLOAT16 logical type); values are widened, not rounded.
package bmstore

import (
	"fmt"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// DataType is a user column's data type (A.4.2).
type DataType = blockmodel.DataType

// kind is the in-memory slice a data type uses.
type kind int

const (
	kBool kind = iota
	kInt
	kUint
	kFloat
	kString
)

// kindOf is the in-memory slice of a data type.
func kindOf(t DataType) (kind, error) {
	switch t {
	case blockmodel.Boolean:
		return kBool, nil
	case blockmodel.Int8, blockmodel.Int16, blockmodel.Int32, blockmodel.Int64, blockmodel.Date32, blockmodel.Timestamp:
		return kInt, nil
	case blockmodel.UInt8, blockmodel.UInt16, blockmodel.UInt32, blockmodel.UInt64:
		return kUint, nil
	case blockmodel.Float16, blockmodel.Float32, blockmodel.Float64:
		return kFloat, nil
	case blockmodel.Utf8:
		return kString, nil
	}
	return 0, fmt.Errorf("unknown data type %q", string(t))
}

// Column is a batch of values of one column in row order. Exactly one of the
// typed slices is used, by Type: Bools (blockmodel.Boolean), Ints (signed integers,
// blockmodel.Date32, blockmodel.Timestamp), Uints (unsigned integers), Floats (blockmodel.Float16/32/64) or
// Strings (blockmodel.Utf8). Null[r], when Null is non-nil, marks row r as having no
// value; a NaN in Floats is a null too. Given, when non-nil, marks the rows an
// update supplies (absent rows keep their value with merge and become null
// with replace); it is ignored elsewhere.
//
// U32, when non-nil, holds the values of an unsigned column of at most 32
// bits in place of Uints (4 bytes a row, not 8): a query's index columns
// (see EmptyUint32Column). The writers read it; other code uses Uints.
type Column struct {
	Type    DataType
	Bools   []bool
	Ints    []int64
	Uints   []uint64
	U32     []uint32
	Floats  []float64
	Strings []string
	Null    []bool
	Given   []bool
}

// Len is the number of rows of the batch.
func (c *Column) Len() int {
	switch k, _ := kindOf(c.Type); k {
	case kBool:
		return len(c.Bools)
	case kInt:
		return len(c.Ints)
	case kUint:
		if c.U32 != nil {
			return len(c.U32)
		}
		return len(c.Uints)
	case kFloat:
		return len(c.Floats)
	default:
		return len(c.Strings)
	}
}

// appendUint appends v to an unsigned column (to U32, truncated, when it
// holds its values).
func (c *Column) appendUint(v uint64) {
	if c.U32 != nil {
		c.U32 = append(c.U32, uint32(v))
		return
	}
	c.Uints = append(c.Uints, v)
}

// uint returns the value of row r of an unsigned column (Uints or U32).
func (c *Column) uint(r int) uint64 {
	if c.U32 != nil {
		return uint64(c.U32[r])
	}
	return c.Uints[r]
}

// IsNull reports whether row r is null (including NaN floats).
func (c *Column) IsNull(r int) bool {
	if c.Null != nil && c.Null[r] {
		return true
	}
	if c.Floats != nil && math.IsNaN(c.Floats[r]) {
		return true
	}
	return false
}

func (c *Column) check() error {
	if _, err := kindOf(c.Type); err != nil {
		return err
	}
	n := c.Len()
	if c.U32 != nil && (c.Type == blockmodel.UInt64 || len(c.Uints) > 0) {
		return fmt.Errorf("column batch: 32-bit values of a %s column, or with Uints too", c.Type)
	}
	if c.Null != nil && len(c.Null) != n {
		return fmt.Errorf("column batch: %d null flags for %d rows", len(c.Null), n)
	}
	if c.Given != nil && len(c.Given) != n {
		return fmt.Errorf("column batch: %d given flags for %d rows", len(c.Given), n)
	}
	return nil
}

// newColumn returns an empty batch of type t with capacity n and a Null slice.
func newColumn(t DataType, n int) Column {
	c := EmptyColumn(t, n)
	c.Null = make([]bool, 0, n)
	return c
}

// EmptyColumn returns an empty batch of type t with room for n rows in its
// typed slice and no null flags (Null nil: no row is null).
func EmptyColumn(t DataType, n int) Column {
	c := Column{Type: t}
	switch k, _ := kindOf(t); k {
	case kBool:
		c.Bools = make([]bool, 0, n)
	case kInt:
		c.Ints = make([]int64, 0, n)
	case kUint:
		c.Uints = make([]uint64, 0, n)
	case kFloat:
		c.Floats = make([]float64, 0, n)
	default:
		c.Strings = make([]string, 0, n)
	}
	return c
}

// EmptyUint32Column returns an empty batch of an unsigned type of at most
// 32 bits (t) with room for n rows in U32 and no null flags.
func EmptyUint32Column(t DataType, n int) Column {
	return Column{Type: t, U32: make([]uint32, 0, n)}
}

// reset empties c keeping its capacity.
func (c *Column) reset() {
	c.Bools, c.Ints, c.Uints, c.U32 = c.Bools[:0], c.Ints[:0], c.Uints[:0], c.U32[:0]
	c.Floats, c.Strings, c.Null = c.Floats[:0], c.Strings[:0], c.Null[:0]
	if c.Bools == nil && c.Type == blockmodel.Boolean {
		c.Bools = []bool{}
	}
}

// appendFrom appends row r of src (same type) to c.
func (c *Column) appendFrom(src *Column, r int) {
	null := src.IsNull(r)
	c.Null = append(c.Null, null)
	switch k, _ := kindOf(c.Type); k {
	case kBool:
		c.Bools = append(c.Bools, !null && src.Bools[r])
	case kInt:
		c.Ints = append(c.Ints, zeroIf(null, src.Ints, r))
	case kUint:
		var v uint64
		if !null {
			v = src.uint(r)
		}
		c.appendUint(v)
	case kFloat:
		v := math.NaN()
		if !null {
			v = src.Floats[r]
		}
		c.Floats = append(c.Floats, v)
	default:
		c.Strings = append(c.Strings, zeroIf(null, src.Strings, r))
	}
}

// appendRange appends rows [lo, hi) of src (same type) to c, in bulk; c's
// Null flags are always kept (false where src has none). NaN floats are
// copied as they are (they read as null).
func (c *Column) appendRange(src *Column, lo, hi int) {
	if src.Null != nil {
		c.Null = append(c.Null, src.Null[lo:hi]...)
	} else {
		at := len(c.Null)
		c.Null = slices.Grow(c.Null, hi-lo)[:at+hi-lo]
		clear(c.Null[at:])
	}
	switch k, _ := kindOf(c.Type); k {
	case kBool:
		c.Bools = append(c.Bools, src.Bools[lo:hi]...)
	case kInt:
		c.Ints = append(c.Ints, src.Ints[lo:hi]...)
	case kUint:
		switch {
		case c.U32 == nil && src.U32 == nil:
			c.Uints = append(c.Uints, src.Uints[lo:hi]...)
		case c.U32 != nil && src.U32 != nil:
			c.U32 = append(c.U32, src.U32[lo:hi]...)
		default:
			for r := lo; r < hi; r++ {
				c.appendUint(src.uint(r))
			}
		}
	case kFloat:
		c.Floats = append(c.Floats, src.Floats[lo:hi]...)
	default:
		c.Strings = append(c.Strings, src.Strings[lo:hi]...)
	}
}

// appendNull appends a null row.
func (c *Column) appendNull() {
	c.Null = append(c.Null, true)
	switch k, _ := kindOf(c.Type); k {
	case kBool:
		c.Bools = append(c.Bools, false)
	case kInt:
		c.Ints = append(c.Ints, 0)
	case kUint:
		c.appendUint(0)
	case kFloat:
		c.Floats = append(c.Floats, math.NaN())
	default:
		c.Strings = append(c.Strings, "")
	}
}

func zeroIf[T any](null bool, s []T, r int) T {
	var z T
	if null {
		return z
	}
	return s[r]
}
