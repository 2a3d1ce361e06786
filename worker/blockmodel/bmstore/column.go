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
//
// A float column may also carry codes (see PickCodes): a code a row,
// given by the dictionary-encoded pages it was read from, that lets the
// writers encode a dictionary without hashing every value.
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
	// codes, when there is one a row of Floats, code the values by spans
	// of rows (codeSpans): the rows of a span with a dictionary whose
	// code is the same hold the same value. They are a hint: the Scanner
	// sets them from dictionary pages, PickCodes keeps them through a
	// selection, and the writers check every value against the first of
	// its code, ignoring codes that do not hold (or whose length is not
	// that of Floats: code that changes Floats need not keep them).
	codes     []uint32
	codeSpans []codeSpan
}

// codeSpan is a span of rows of a Column with codes: from row from to the
// next span's (or the end), coded by dict (nil: rows without codes, zero).
type codeSpan struct {
	from int
	dict *codeDict
}

// codeDict stands for the dictionary of one column chunk read: its
// identity (pointer) and size (codes are below it).
type codeDict struct {
	size int
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

// Reset empties c keeping its storage (and the absence of null flags).
func (c *Column) Reset() {
	c.Bools, c.Ints, c.Uints, c.U32 = c.Bools[:0], c.Ints[:0], c.Uints[:0], c.U32[:0]
	c.Floats, c.Strings, c.Null = c.Floats[:0], c.Strings[:0], c.Null[:0]
	c.codes, c.codeSpans = c.codes[:0], c.codeSpans[:0]
	if c.Bools == nil && c.Type == blockmodel.Boolean {
		c.Bools = []bool{}
	}
}

// coded reports whether c's codes are well formed: one a row of Floats,
// spans from row 0 in order within the rows (a span may be empty).
func (c *Column) coded() bool {
	if len(c.codes) != len(c.Floats) || len(c.codeSpans) == 0 || c.codeSpans[0].from != 0 {
		return false
	}
	for i := 1; i < len(c.codeSpans); i++ {
		if f := c.codeSpans[i].from; f < c.codeSpans[i-1].from || f > len(c.Floats) {
			return false
		}
	}
	return true
}

// codesFrom prepares c's codes for rows appended from row at (the rows
// before it keep their codes, or get zeros without a dictionary when they
// do not have one a row), coded by dict (nil: none); the caller then
// appends the rows' codes.
func (c *Column) codesFrom(at int, dict *codeDict) {
	if cap(c.codes) < cap(c.Floats) { // room for as many codes as values, once
		c.codes = append(make([]uint32, 0, cap(c.Floats)), c.codes...)
	}
	if len(c.codes) != at || (at > 0 && len(c.codeSpans) == 0) {
		c.codes, c.codeSpans = append(c.codes[:0], make([]uint32, at)...), c.codeSpans[:0]
		if at > 0 {
			c.codeSpans = append(c.codeSpans, codeSpan{})
		}
	}
	n := len(c.codeSpans)
	switch {
	case n > 0 && c.codeSpans[n-1].dict == dict:
	case n > 0 && c.codeSpans[n-1].from == at: // an empty span: replaced
		c.codeSpans[n-1].dict = dict
	default:
		c.codeSpans = append(c.codeSpans, codeSpan{from: at, dict: dict})
	}
}

// uncoded gives the rows of c from row at, appended without codes, zero
// codes in a span without dictionary when the rows before have codes.
func (c *Column) uncoded(at int) {
	if len(c.codes) > 0 {
		c.codesFrom(at, nil)
		c.codes = append(c.codes, make([]uint32, len(c.Floats)-at)...)
	}
}

// PickCodes keeps the codes of src's values (see Column) for the rows of
// c from row at: the rows of src from row lo that a selection keeps, the
// runs [a, b) of rows (counted from lo) when runs is not nil, else the rows
// r with sel[r-lo] set, whose Floats were appended to c. Without codes in
// src those rows get none; when c has none either it does nothing.
func (c *Column) PickCodes(src *Column, at, lo int, runs [][2]int, sel []bool) {
	if !src.coded() {
		c.uncoded(at)
		return
	}
	hi, next := lo+len(sel), at
	for i, sp := range src.codeSpans {
		end := len(src.Floats)
		if i+1 < len(src.codeSpans) {
			end = src.codeSpans[i+1].from
		}
		a, b := max(sp.from, lo), min(end, hi)
		if a >= b {
			continue
		}
		c.codesFrom(next, sp.dict)
		if runs == nil {
			for r := a; r < b; r++ {
				if sel[r-lo] {
					c.codes = append(c.codes, src.codes[r])
				}
			}
		} else {
			for _, run := range runs {
				if x, y := max(lo+run[0], a), min(lo+run[1], b); x < y {
					c.codes = append(c.codes, src.codes[x:y]...)
				}
			}
		}
		next = len(c.codes)
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
