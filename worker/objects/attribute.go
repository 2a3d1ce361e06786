package objects

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Attribute types the worker reads or writes (the "attribute_type" member).
const (
	AttributeScalar             = "scalar"
	AttributeEnsembleContinuous = "ensemble_continuous"
	AttributeCategory           = "category"
	AttributeInteger            = "integer"
	AttributeBool               = "bool"
)

// Attribute is one item of an attribute list of an object.
type Attribute struct {
	// List is the JSON path of the list holding the attribute, e.g.
	// "locations.attributes" or "cell_attributes"; Index its position.
	List  string
	Index int
	Name  string
	// Key is the attribute's stable identifier ("" when absent, as allowed
	// by attribute lists before 1.2.0).
	Key  string
	Type string
	// NaN holds the nan_description sentinels ("no value" markers).
	NaN []float64
	// Values is the values element; nil for attribute types whose values
	// member is not an array element the worker understands.
	Values *Element
	// Table is the lookup table of a category attribute.
	Table *Element
}

// Ref returns an expression that addresses the attribute: by key when it has
// one, else by name (docs/objects.md 4.3).
func (a *Attribute) Ref() string {
	if a.Key != "" {
		return a.List + "[?key==" + quoteLiteral(a.Key) + "]"
	}
	return a.List + "[?name==" + quoteLiteral(a.Name) + "]"
}

// label names the attribute in errors.
func (a *Attribute) label() string {
	return a.List + "[?name==" + quoteLiteral(a.Name) + "]"
}

// IsContinuous reports whether the attribute is a continuous attribute or a
// continuous ensemble.
func (a *Attribute) IsContinuous() bool {
	return a.Type == AttributeScalar || a.Type == AttributeEnsembleContinuous
}

// Width returns the number of value columns (realisations of an ensemble, 1
// otherwise).
func (a *Attribute) Width() int {
	if a.Values == nil {
		return 0
	}
	return a.Values.Columns()
}

// quoteLiteral renders s as a JMESPath raw string literal '...'.
func quoteLiteral(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}

type attributeJSON struct {
	Name           *string `json:"name"`
	Key            *string `json:"key"`
	AttributeType  string  `json:"attribute_type"`
	NanDescription *struct {
		Values []json.Number `json:"values"`
	} `json:"nan_description"`
	Values json.RawMessage `json:"values"`
	Table  json.RawMessage `json:"table"`
}

// decodeAttributes decodes the attribute list at path from raw JSON (absent or
// null = empty list).
func decodeAttributes(path string, raw json.RawMessage) ([]Attribute, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%s: not a list: %w", path, err)
	}
	out := make([]Attribute, len(items))
	for i, item := range items {
		a, err := decodeAttribute(path, i, item)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

func decodeAttribute(list string, index int, raw json.RawMessage) (Attribute, error) {
	at := fmt.Sprintf("%s[%d]", list, index)
	var w attributeJSON
	if err := json.Unmarshal(raw, &w); err != nil {
		return Attribute{}, fmt.Errorf("%s: %w", at, err)
	}
	if w.Name == nil {
		return Attribute{}, fmt.Errorf("%s: missing name", at)
	}
	a := Attribute{List: list, Index: index, Name: *w.Name, Type: w.AttributeType}
	if w.Key != nil {
		a.Key = *w.Key
	}
	if w.NanDescription != nil {
		for _, n := range w.NanDescription.Values {
			f, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return Attribute{}, fmt.Errorf("%s.nan_description.values: %q: %w", at, n, err)
			}
			a.NaN = append(a.NaN, f)
		}
	}
	switch a.Type {
	case AttributeScalar, AttributeEnsembleContinuous, AttributeCategory, AttributeInteger, AttributeBool:
		e, err := decodeElement(at+".values", w.Values)
		if err != nil {
			return Attribute{}, err
		}
		a.Values = &e
		if a.Type == AttributeCategory {
			t, err := decodeElement(at+".table", w.Table)
			if err != nil {
				return Attribute{}, err
			}
			a.Table = &t
		}
	default:
		// Other attribute types (string, colour, vector, time series...) are
		// carried through untouched; their values element is read when it has
		// the usual shape.
		if e, err := decodeElement(at+".values", w.Values); err == nil {
			a.Values = &e
		}
	}
	if err := a.checkShape(); err != nil {
		return Attribute{}, err
	}
	return a, nil
}

// checkShape checks the data types the worker relies on.
func (a *Attribute) checkShape() error {
	if a.Values == nil {
		return nil
	}
	v := a.Values
	want := map[string]DataType{
		AttributeScalar: TypeFloat64, AttributeEnsembleContinuous: TypeFloat64, AttributeBool: TypeBool,
	}[a.Type]
	if want != "" && v.DataType != want {
		return fmt.Errorf("%s: data_type %q, want %q", v.Path, v.DataType, want)
	}
	if (a.Type == AttributeCategory || a.Type == AttributeInteger) && v.DataType != TypeInt32 && v.DataType != TypeInt64 {
		return fmt.Errorf("%s: data_type %q, want int32 or int64", v.Path, v.DataType)
	}
	if a.Type == AttributeScalar && v.Columns() != 1 {
		return fmt.Errorf("%s: width %d, want 1", v.Path, v.Width)
	}
	return nil
}
