package blockmodel

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// DataType is the data type of a block model column (A.4.2).
type DataType string

// The column data types. Timestamp is microseconds since the epoch, UTC.
const (
	Boolean   DataType = "Boolean"
	Int8      DataType = "Int8"
	Int16     DataType = "Int16"
	Int32     DataType = "Int32"
	Int64     DataType = "Int64"
	UInt8     DataType = "UInt8"
	UInt16    DataType = "UInt16"
	UInt32    DataType = "UInt32"
	UInt64    DataType = "UInt64"
	Float16   DataType = "Float16"
	Float32   DataType = "Float32"
	Float64   DataType = "Float64"
	Utf8      DataType = "Utf8"
	Date32    DataType = "Date32"
	Timestamp DataType = "Timestamp"
)

// DataTypes returns every column data type, in the order of A.4.2.
func DataTypes() []DataType {
	return []DataType{Boolean, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
		Float16, Float32, Float64, Utf8, Date32, Timestamp}
}

// Valid reports whether t is one of DataTypes.
func (t DataType) Valid() bool {
	for _, v := range DataTypes() {
		if t == v {
			return true
		}
	}
	return false
}

// Numeric reports whether values of t convert to float64 (the integer and
// float types), the types a compute task reads as a continuous source.
func (t DataType) Numeric() bool {
	switch t {
	case Boolean, Utf8, Date32, Timestamp:
		return false
	}
	return t.Valid()
}

// SystemColumn is a column the engine maintains: its title (also its
// col_id in a version's mapping, OPEN-9) and type.
type SystemColumn struct {
	Title    string
	DataType DataType
}

// Names of the system columns.
const (
	ColI, ColJ, ColK                   = "i", "j", "k"
	ColSidx                            = "sidx"
	ColStartSI, ColStartSJ, ColStartSK = "start_si", "start_sj", "start_sk"
	ColEndSI, ColEndSJ, ColEndSK       = "end_si", "end_sj", "end_sk"
	ColX, ColY, ColZ                   = "x", "y", "z"
	ColDX, ColDY, ColDZ                = "dx", "dy", "dz"
	ColVersionID                       = "version_id"
	ColSubBlockDerivation              = "sub_block_derivation"
)

// IndexColumns returns the columns that identify a row by its indices
// (A.7.4), the index geometry of a query (A.8): i, j, k, then sidx
// (fully-sub-blocked, octree) or start_si … end_sk (flexible).
func IndexColumns(t ModelType) []string {
	switch t {
	case FullySubBlocked, VariableOctree:
		return []string{ColI, ColJ, ColK, ColSidx}
	case Flexible:
		return []string{ColI, ColJ, ColK, ColStartSI, ColStartSJ, ColStartSK, ColEndSI, ColEndSJ, ColEndSK}
	}
	return []string{ColI, ColJ, ColK}
}

// CoordinateColumns returns the columns that identify a row by its
// centroid (A.7.4), the coordinate geometry of a query (A.8): x, y, z and,
// sub-blocked, dx, dy, dz.
func CoordinateColumns(t ModelType) []string {
	if t.SubBlocked() {
		return []string{ColX, ColY, ColZ, ColDX, ColDY, ColDZ}
	}
	return []string{ColX, ColY, ColZ}
}

// SystemColumnType returns the data type of a system column by its exact
// title (A.4.1): UInt32 for i, j, k and sidx, UInt8 for the flexible
// corners, Float64 for x … dz, Int64 for version_id; ok is false for any
// other title.
func SystemColumnType(title string) (t DataType, ok bool) {
	switch title {
	case ColI, ColJ, ColK, ColSidx:
		return UInt32, true
	case ColStartSI, ColStartSJ, ColStartSK, ColEndSI, ColEndSJ, ColEndSK:
		return UInt8, true
	case ColX, ColY, ColZ, ColDX, ColDY, ColDZ:
		return Float64, true
	case ColVersionID:
		return Int64, true
	}
	return "", false
}

// SystemColumns returns the system columns of a kind in their order (A.4.1):
// the IndexColumns, then the CoordinateColumns, then version_id.
func SystemColumns(t ModelType) []SystemColumn {
	names := append(IndexColumns(t), CoordinateColumns(t)...)
	cols := make([]SystemColumn, 0, len(names)+1)
	for _, n := range append(names, ColVersionID) {
		dt, _ := SystemColumnType(n)
		cols = append(cols, SystemColumn{n, dt})
	}
	return cols
}

// IsSystemColumn reports whether a title is the name of a system column of
// any kind (or the query-only sub_block_derivation), case-insensitively.
func IsSystemColumn(title string) bool {
	switch strings.ToLower(title) {
	case ColI, ColJ, ColK, ColSidx, ColStartSI, ColStartSJ, ColStartSK, ColEndSI, ColEndSJ, ColEndSK,
		ColX, ColY, ColZ, ColDX, ColDY, ColDZ, ColVersionID, ColSubBlockDerivation:
		return true
	}
	return false
}

// MaxTitleLength is the longest column title, in characters.
const MaxTitleLength = 100

// ValidateTitle checks a user column title (A.4.2, OPEN-10): 1–100
// characters, no leading space or dot, none of / \ : > < | ? " *, not a
// system column name, not shaped like a UUID. The error says why;
// uniqueness is TitleKey's.
func ValidateTitle(title string) error {
	n := utf8.RuneCountInString(title)
	switch {
	case !utf8.ValidString(title):
		return fmt.Errorf("the title is not valid UTF-8")
	case n < 1 || n > MaxTitleLength:
		return fmt.Errorf("the title must be 1 to %d characters long, not %d", MaxTitleLength, n)
	case title[0] == ' ' || title[0] == '.':
		return fmt.Errorf("the title %q must not start with a space or a dot", title)
	case strings.ContainsAny(title, `/\:><|?"*`):
		return fmt.Errorf(`the title %q must not contain any of / \ : > < | ? " *`, title)
	case IsSystemColumn(title):
		return fmt.Errorf("the title %q is the name of a system column", title)
	}
	if _, err := uuid.Parse(title); err == nil {
		return fmt.Errorf("the title %q has the shape of a column id (a UUID)", title)
	}
	return nil
}

// TitleKey returns the key under which titles must be unique within a
// version (case-insensitive).
func TitleKey(title string) string { return strings.ToLower(title) }

// NewColID returns a fresh col_id for a new user column: a random (v4)
// UUID in canonical form.
func NewColID() string { return uuid.NewString() }

// SystemBatch holds the system columns of a range of rows (A.4.1), one
// slice per column, each the length of the range; the columns a kind does
// not have are empty. version_id is data of the version, not geometry, and
// is not here.
type SystemBatch struct {
	I, J, K                                        []uint32
	Sidx                                           []uint32
	StartSI, StartSJ, StartSK, EndSI, EndSJ, EndSK []uint8
	X, Y, Z                                        []float64
	DX, DY, DZ                                     []float64
}

// grow returns s resized to n, reusing its array when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// FillSystem writes the system columns of rows [from, to) into dst, reusing
// its slices, so that a query streams a large model in batches (e.g. of
// 100,000 rows) without building whole-model columns. The row range must
// lie within [0, NumRows()].
func (b *Blocks) FillSystem(from, to int64, dst *SystemBatch) error {
	if from < 0 || to < from || to > b.n {
		return fmt.Errorf("blockmodel: rows [%d, %d) outside [0, %d)", from, to, b.n)
	}
	n := int(to - from)
	kind := b.g.kind
	dst.I, dst.J, dst.K = grow(dst.I, n), grow(dst.J, n), grow(dst.K, n)
	dst.X, dst.Y, dst.Z = grow(dst.X, n), grow(dst.Y, n), grow(dst.Z, n)
	sub := 0
	if kind.SubBlocked() {
		sub = n
	}
	dst.DX, dst.DY, dst.DZ = grow(dst.DX, sub), grow(dst.DY, sub), grow(dst.DZ, sub)
	sidx, corners := 0, 0
	switch kind {
	case FullySubBlocked, VariableOctree:
		sidx = n
	case Flexible:
		corners = n
	}
	dst.Sidx = grow(dst.Sidx, sidx)
	dst.StartSI, dst.StartSJ, dst.StartSK = grow(dst.StartSI, corners), grow(dst.StartSJ, corners), grow(dst.StartSK, corners)
	dst.EndSI, dst.EndSJ, dst.EndSK = grow(dst.EndSI, corners), grow(dst.EndSJ, corners), grow(dst.EndSK, corners)
	for r := 0; r < n; r++ {
		row := from + int64(r)
		i, j, k := b.g.ParentIJK(b.Parent(row))
		dst.I[r], dst.J[r], dst.K[r] = i, j, k
		c := b.Centroid(row)
		dst.X[r], dst.Y[r], dst.Z[r] = c[0], c[1], c[2]
		if sub == 0 {
			continue
		}
		s, e := b.Corners(row)
		d := b.Extent(row)
		dst.DX[r], dst.DY[r], dst.DZ[r] = d[0], d[1], d[2]
		if sidx > 0 {
			dst.Sidx[r] = b.g.Sidx(s)
		} else {
			dst.StartSI[r], dst.StartSJ[r], dst.StartSK[r] = s[0], s[1], s[2]
			dst.EndSI[r], dst.EndSJ[r], dst.EndSK[r] = e[0], e[1], e[2]
		}
	}
	return nil
}
