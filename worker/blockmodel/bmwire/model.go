package bmwire

import (
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
)

// Length limits of the bodies' free texts (A.3.1, A.7.1).
const (
	maxComment     = 250
	maxDescription = 500
)

// ModelInfo is what the checks of an update or a query need to know about
// the block model: its kind, parent counts and user columns.
type ModelInfo struct {
	Kind blockmodel.ModelType
	// N is the number of parent blocks along i, j, k.
	N [3]int
	// Columns are the user columns of the latest version (or, for a query,
	// of the version queried).
	Columns []blockmodel.Column
}

// byTitle finds a column of m by exact title.
func (m ModelInfo) byTitle(title string) (blockmodel.Column, bool) {
	for _, c := range m.Columns {
		if c.Title == title {
			return c, true
		}
	}
	return blockmodel.Column{}, false
}

// titleTaken reports a column of m whose title equals t case-insensitively.
func (m ModelInfo) titleTaken(t string) bool {
	for _, c := range m.Columns {
		if blockmodel.TitleKey(c.Title) == blockmodel.TitleKey(t) {
			return true
		}
	}
	return false
}

// systemName reports whether t is, letter for letter, the name of a system
// column (the names column_name_mapping may target besides the file's
// columns).
func systemName(t string) bool { return blockmodel.IsSystemColumn(t) && t == strings.ToLower(t) }

// systemType is the data type an identity column is read as.
func systemType(name string) blockmodel.DataType {
	t, _ := blockmodel.SystemColumnType(name)
	return t
}
