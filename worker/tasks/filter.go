package tasks

import (
	"encoding/json"
	"fmt"
	"math"
)

// Filter is a row filter of the current request shape (docs/objects.md
// 4.3): a condition on one attribute, or all_of / any_of over sub-filters.
type Filter struct {
	// Type is "condition", "all_of" or "any_of".
	Type      string
	Attribute string
	Operator  string
	// Values of in / not_in: category names (strings) or keys (numbers).
	Values    []any
	Threshold float64
	Filters   []*Filter
}

// thresholdOps are the operators that compare against a threshold.
var thresholdOps = map[string]func(a, b float64) bool{
	"equal":                    func(a, b float64) bool { return a == b },
	"not_equal":                func(a, b float64) bool { return a != b },
	"greater_than":             func(a, b float64) bool { return a > b },
	"greater_than_or_equal_to": func(a, b float64) bool { return a >= b },
	"less_than":                func(a, b float64) bool { return a < b },
	"less_than_or_equal_to":    func(a, b float64) bool { return a <= b },
}

// filter decodes an optional {"where": <expr>} member.
func (f *fields) filter(key string) *Filter {
	if !f.has(key) {
		return nil
	}
	w := f.sub(key)
	if !w.need("where") {
		return nil
	}
	return w.sub("where").filterExpr(0)
}

func (f *fields) filterExpr(depth int) *Filter {
	if depth > 32 {
		f.p.add(prefixName(f.prefix), "filters are nested too deeply")
		return nil
	}
	out := &Filter{Type: f.str("type")}
	switch out.Type {
	case "condition":
		out.Attribute = f.str("attribute")
		out.Operator = f.str("operator")
		switch {
		case out.Operator == "in" || out.Operator == "not_in":
			if !f.unmarshal("values", &out.Values) {
				f.p.add(f.name("values"), "is required for operator %q", out.Operator)
			}
			// The client sends the unused payload as an explicit null
			// (null counts as absent); a value there is a mismatch.
			if f.has("threshold") {
				f.p.add(f.name("threshold"), "applies to the comparison operators only, not to %q", out.Operator)
			}
			for i, v := range out.Values {
				switch v.(type) {
				case string, float64:
				default:
					f.p.add(fmt.Sprintf("%s[%d]", f.name("values"), i), "must be a string or an integer")
				}
			}
		case thresholdOps[out.Operator] != nil:
			v, ok := 0.0, false
			if f.has("threshold") {
				v, ok = f.number("threshold")
			}
			if !ok {
				f.p.add(f.name("threshold"), "is required for operator %q", out.Operator)
			}
			out.Threshold = v
			if f.has("values") {
				f.p.add(f.name("values"), "applies to in / not_in only, not to %q", out.Operator)
			}
		case out.Operator != "":
			f.p.add(f.name("operator"), "unknown operator %q", out.Operator)
		}
	case "all_of", "any_of":
		var raws []json.RawMessage
		if !f.unmarshal("filters", &raws) || len(raws) == 0 {
			f.p.add(f.name("filters"), "a non-empty list is required")
		}
		for i, r := range raws {
			sub := newFields(r, fmt.Sprintf("%s[%d]", f.name("filters"), i), f.p, f.rule("filters").items.obj)
			if c := sub.filterExpr(depth + 1); c != nil {
				out.Filters = append(out.Filters, c)
			}
		}
	case "":
	default:
		f.p.add(f.name("type"), "must be condition, all_of or any_of (got %q)", out.Type)
	}
	return out
}

// regionFilter decodes the legacy {"attribute", "names" | "values"} as the
// condition "attribute in names" (or keys): exactly one list, non-null.
func (f *fields) regionFilter() *Filter {
	out := &Filter{Type: "condition", Operator: "in", Attribute: f.str("attribute")}
	var names []string
	var keys []json.Number
	hasNames, hasKeys := f.unmarshal("names", &names), f.unmarshal("values", &keys)
	if hasNames == hasKeys {
		f.p.add(prefixName(f.prefix), "exactly one of names and values is required")
		return nil
	}
	for _, n := range names {
		out.Values = append(out.Values, n)
	}
	for i, k := range keys {
		v, err := k.Int64()
		if err != nil {
			fv, ferr := k.Float64()
			if ferr != nil || fv != math.Trunc(fv) {
				f.p.add(fmt.Sprintf("%s[%d]", f.name("values"), i), "must be an integer")
				continue
			}
			v = int64(fv)
		}
		out.Values = append(out.Values, float64(v))
	}
	return out
}

// Column is what a filter condition reads of an attribute: numeric values
// (continuous or integer attributes, NaN for no-data), or category keys with
// their names.
type Column struct {
	Numeric []float64
	Keys    []int64
	Names   map[int64]string
	// Valid marks the category rows that have a value (nil: all do).
	Valid []bool
}

// Len returns the number of rows.
func (c *Column) Len() int {
	if c.Numeric != nil {
		return len(c.Numeric)
	}
	return len(c.Keys)
}

// Resolver returns the column an attribute expression addresses on the
// filtered object.
type Resolver func(expr string) (*Column, error)

// Eval returns the rows of an n-row object that pass the filter. A row whose
// attribute has no value fails every condition.
func (flt *Filter) Eval(n int, resolve Resolver) ([]bool, error) {
	switch flt.Type {
	case "all_of", "any_of":
		out := make([]bool, n)
		for i := range out {
			out[i] = flt.Type == "all_of"
		}
		for _, sub := range flt.Filters {
			m, err := sub.Eval(n, resolve)
			if err != nil {
				return nil, err
			}
			for i := range out {
				if flt.Type == "all_of" {
					out[i] = out[i] && m[i]
				} else {
					out[i] = out[i] || m[i]
				}
			}
		}
		return out, nil
	}
	col, err := resolve(flt.Attribute)
	if err != nil {
		return nil, fmt.Errorf("filter attribute %q: %w", flt.Attribute, err)
	}
	if col.Len() != n {
		return nil, fmt.Errorf("filter attribute %q has %d rows, the object has %d", flt.Attribute, col.Len(), n)
	}
	out := make([]bool, n)
	if cmp := thresholdOps[flt.Operator]; cmp != nil {
		for i := range out {
			v, ok := col.number(i)
			out[i] = ok && cmp(v, flt.Threshold)
		}
		return out, nil
	}
	negate := flt.Operator == "not_in"
	for i := range out {
		out[i] = col.member(i, flt.Values)
		if negate && col.valid(i) {
			out[i] = !out[i]
		}
	}
	return out, nil
}

func (c *Column) valid(i int) bool {
	if c.Numeric != nil {
		return !math.IsNaN(c.Numeric[i])
	}
	return c.Valid == nil || c.Valid[i]
}

func (c *Column) number(i int) (float64, bool) {
	if c.Numeric != nil {
		return c.Numeric[i], !math.IsNaN(c.Numeric[i])
	}
	return float64(c.Keys[i]), c.valid(i)
}

// member reports whether row i's value is one of values: numbers match the
// value or category key, strings match the category name.
func (c *Column) member(i int, values []any) bool {
	if !c.valid(i) {
		return false
	}
	for _, v := range values {
		switch v := v.(type) {
		case float64:
			if x, _ := c.number(i); x == v {
				return true
			}
		case string:
			if c.Keys != nil && c.Names[c.Keys[i]] == v {
				return true
			}
		}
	}
	return false
}
