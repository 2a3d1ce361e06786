package bmwire

import "strings"

// Kinds of block model (size_options.model_type).
const (
	KindRegular    = "regular"
	KindFullySub   = "fully-sub-blocked"
	KindFlexible   = "flexible"
	KindOctree     = "variable-octree"
	defaultKind    = KindRegular
	maxComment     = 250
	maxDescription = 500
	maxCRS         = 10000
)

// DataType is a column's data type (A.4.2).
type DataType string

// The data types a user column may have; Timestamp is microseconds, UTC.
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

// dataTypes lists every data type, in the client's order.
var dataTypes = []DataType{Boolean, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
	Float16, Float32, Float64, Utf8, Date32, Timestamp}

// Valid reports whether t is one of the data types.
func (t DataType) Valid() bool {
	for _, d := range dataTypes {
		if d == t {
			return true
		}
	}
	return false
}

// Rules are the checks of the model package this package applies while
// validating bodies: column title syntax and the units table.
type Rules interface {
	// CheckTitle returns why title is not a valid column title (A.4.2:
	// length, characters, UUID shape, system names), nil when it is.
	// Uniqueness is checked here.
	CheckTitle(title string) error
	// KnownUnit reports whether id is a unit of the units table.
	KnownUnit(id string) bool
	// LengthUnit reports whether id is a unit of type LENGTH.
	LengthUnit(id string) bool
}

// Column is an existing column of the model's latest version, as the
// checks of an update or a query need it.
type Column struct {
	ColID    string
	Title    string
	DataType DataType
}

// ModelInfo is what the checks of an update or a query need to know about
// the block model: its kind, parent counts and user columns.
type ModelInfo struct {
	Kind string
	// N is the number of parent blocks along i, j, k.
	N [3]int
	// Columns are the user columns of the latest version (or, for a query,
	// of the version queried).
	Columns []Column
}

// SystemColumns returns the system columns of a kind (A.4.1), version_id
// last.
func SystemColumns(kind string) []string {
	switch kind {
	case KindFullySub, KindOctree:
		return []string{"i", "j", "k", "sidx", "x", "y", "z", "dx", "dy", "dz", "version_id"}
	case KindFlexible:
		return []string{"i", "j", "k", "start_si", "start_sj", "start_sk", "end_si", "end_sj", "end_sk",
			"x", "y", "z", "dx", "dy", "dz", "version_id"}
	}
	return []string{"i", "j", "k", "x", "y", "z", "version_id"}
}

// reserved names every kind's system columns (none may be a user column's
// title or the target of a column operation).
var reserved = map[string]bool{"i": true, "j": true, "k": true, "sidx": true, "x": true, "y": true, "z": true,
	"dx": true, "dy": true, "dz": true, "version_id": true, "sub_block_derivation": true,
	"start_si": true, "start_sj": true, "start_sk": true, "end_si": true, "end_sj": true, "end_sk": true}

// IsSystemColumn reports whether name is a system column name of any kind.
func IsSystemColumn(name string) bool { return reserved[strings.ToLower(name)] }

// subBlocked reports a sub-blocked kind.
func subBlocked(kind string) bool { return kind != KindRegular && kind != "" }

// byTitle finds a column of m by exact title.
func (m ModelInfo) byTitle(title string) (Column, bool) {
	for _, c := range m.Columns {
		if c.Title == title {
			return c, true
		}
	}
	return Column{}, false
}

// titleTaken reports a column of m whose title equals t case-insensitively.
func (m ModelInfo) titleTaken(t string) bool {
	for _, c := range m.Columns {
		if strings.EqualFold(c.Title, t) {
			return true
		}
	}
	return false
}
