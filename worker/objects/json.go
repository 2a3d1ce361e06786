package objects

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// NonFiniteError reports a number that is not finite: a NaN or Infinity
// token (which JSON does not allow but Python's json module writes) or a
// literal too large for a float64. Path is a JSON pointer to it when known.
type NonFiniteError struct {
	Path  string
	Token string
}

// Error implements error.
func (e *NonFiniteError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("non-finite number %s at %s: numbers must be finite", e.Token, e.Path)
	}
	return fmt.Sprintf("non-finite number %s: numbers must be finite", e.Token)
}

// DecodeJSON decodes a JSON object document, keeping numbers as json.Number so
// that re-encoding writes every number exactly as it was read. It rejects
// trailing data, a top level that is not an object, and non-finite numbers
// (*NonFiniteError).
func DecodeJSON(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if tok := nonFiniteToken(data); tok != "" {
			return nil, &NonFiniteError{Token: tok}
		}
		return nil, JSONSyntaxError(data, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err := CheckJSON(data); err != nil {
			return nil, err // where the data after the value starts
		}
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("invalid JSON: the top-level value is not an object")
	}
	if err := checkFinite(doc, ""); err != nil {
		return nil, err
	}
	return doc, nil
}

// EncodeJSON encodes a document decoded by DecodeJSON (keys sorted, numbers
// verbatim, no HTML escaping, no trailing newline).
func EncodeJSON(doc any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkFinite walks v and reports the first number that does not parse to a
// finite float64.
func checkFinite(v any, path string) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkFinite(x[k], path+"/"+escapePointer(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkFinite(e, path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("invalid number %q at %s", string(x), path)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return &NonFiniteError{Path: path, Token: string(x)}
		}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return &NonFiniteError{Path: path, Token: strconv.FormatFloat(x, 'g', -1, 64)}
		}
	}
	return nil
}

// escapePointer escapes a JSON-pointer reference token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// nonFiniteToken returns the first NaN, Infinity or -Infinity token outside
// strings in data, or "".
func nonFiniteToken(data []byte) string {
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				return tok
			}
		}
	}
	return ""
}

// getPath returns the value at a dotted path of object members (e.g.
// "locations.attributes") in doc, or nil.
func getPath(doc map[string]any, path string) any {
	var cur any = doc
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// setPath sets the value at a dotted path, creating intermediate objects.
func setPath(doc map[string]any, path string, v any) error {
	parts := strings.Split(path, ".")
	cur := doc
	for _, part := range parts[:len(parts)-1] {
		next, ok := cur[part]
		if !ok || next == nil {
			m := map[string]any{}
			cur[part] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %q is not an object", path, part)
		}
		cur = m
	}
	cur[parts[len(parts)-1]] = v
	return nil
}

// cloneJSON deep-copies a decoded JSON value.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = cloneJSON(e)
		}
		return s
	}
	return v
}
