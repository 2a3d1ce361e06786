package objects

import (
	"encoding/json"
	"fmt"
	"regexp"
)

// Element is a JSON array element: a reference to one Parquet blob with its
// row count and column layout (docs/objects.md 1.3).
type Element struct {
	// Path is the element's JSON path in the object, e.g.
	// "locations.coordinates"; it names the element in errors.
	Path string
	// Data is the blob key (SHA-256 hex or UUID); "" when the JSON has null.
	Data string
	// Length is the number of rows.
	Length int64
	// Width is the number of columns; 0 when the JSON has no width member
	// (bool-array-1, string arrays, lookup tables).
	Width int
	// DataType is the element's data_type; empty for lookup tables.
	DataType DataType
	// KeysDataType and ValuesDataType are set for lookup tables.
	KeysDataType, ValuesDataType DataType
}

// MaxElementWidth bounds an element's width (its number of columns: the
// realisations of an ensemble), so that the per-column tables a read
// allocates stay small whatever a document claims.
const MaxElementWidth = 1 << 16

// elementJSON is the wire form of an element.
type elementJSON struct {
	Data           *string  `json:"data"`
	Length         *int64   `json:"length"`
	Width          *int     `json:"width"`
	DataType       DataType `json:"data_type"`
	KeysDataType   DataType `json:"keys_data_type"`
	ValuesDataType DataType `json:"values_data_type"`
}

// decodeElement decodes the element at path from raw JSON.
func decodeElement(path string, raw json.RawMessage) (Element, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Element{}, fmt.Errorf("%s: missing array element", path)
	}
	var w elementJSON
	if err := json.Unmarshal(raw, &w); err != nil {
		return Element{}, fmt.Errorf("%s: %w", path, err)
	}
	e := Element{Path: path, DataType: w.DataType, KeysDataType: w.KeysDataType, ValuesDataType: w.ValuesDataType}
	if w.Data != nil {
		e.Data = *w.Data
	}
	if w.Length == nil || *w.Length < 0 {
		return Element{}, fmt.Errorf("%s: length must be an integer >= 0", path)
	}
	e.Length = *w.Length
	if w.Width != nil {
		if *w.Width < 1 {
			return Element{}, fmt.Errorf("%s: width must be >= 1", path)
		}
		if *w.Width > MaxElementWidth {
			return Element{}, &DataError{Member: path, Err: fmt.Errorf("%s: width %d is more than %d columns", path, *w.Width, MaxElementWidth)}
		}
		e.Width = *w.Width
	}
	if e.DataType == "" && e.KeysDataType == "" {
		return Element{}, fmt.Errorf("%s: missing data_type", path)
	}
	return e, nil
}

// Columns returns the number of columns of the element's blob.
func (e Element) Columns() int {
	if e.KeysDataType != "" {
		return 2
	}
	if e.Width == 0 {
		return 1
	}
	return e.Width
}

// Spec returns what the element promises about its blob.
func (e Element) Spec() (TableSpec, error) {
	spec := TableSpec{Element: e.Path, Rows: e.Length}
	if e.KeysDataType != "" {
		if e.KeysDataType != TypeInt32 && e.KeysDataType != TypeInt64 {
			return spec, fmt.Errorf("%s: keys_data_type %q, want int32 or int64", e.Path, e.KeysDataType)
		}
		if e.ValuesDataType != TypeString {
			return spec, fmt.Errorf("%s: values_data_type %q, want string", e.Path, e.ValuesDataType)
		}
		spec.Types = []DataType{e.KeysDataType, TypeString}
		return spec, nil
	}
	if !e.DataType.valid() {
		return spec, fmt.Errorf("%s: unsupported data_type %q", e.Path, e.DataType)
	}
	spec.Types = make([]DataType, e.Columns())
	for i := range spec.Types {
		spec.Types[i] = e.DataType
	}
	return spec, nil
}

// JSON returns the element's wire form: {"data", "length", "width",
// "data_type"} with width omitted when Width is 0 (the SDK drops it for
// bool-array-1 and string arrays).
func (e Element) JSON() map[string]any {
	m := map[string]any{"length": json.Number(fmt.Sprint(e.Length))}
	if e.Data == "" {
		m["data"] = nil
	} else {
		m["data"] = e.Data
	}
	if e.KeysDataType != "" {
		m["keys_data_type"] = string(e.KeysDataType)
		m["values_data_type"] = string(e.ValuesDataType)
		return m
	}
	m["data_type"] = string(e.DataType)
	if e.Width > 0 {
		m["width"] = json.Number(fmt.Sprint(e.Width))
	}
	return m
}

var (
	sha256Key = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	uuidKey   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// IsSHA256Key reports whether s is a 64-digit hex SHA-256 key (either case).
func IsSHA256Key(s string) bool { return sha256Key.MatchString(s) }

// IsUUID reports whether s is a UUID string in the 8-4-4-4-12 hex form.
func IsUUID(s string) bool { return uuidKey.MatchString(s) }

// IsDataKey reports whether s is a valid blob key: a SHA-256 hex digest or a
// UUID (seed 2.4 rule 6).
func IsDataKey(s string) bool { return IsSHA256Key(s) || IsUUID(s) }
