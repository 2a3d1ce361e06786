package bmwire

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/geostat-engine/geostat/worker/blockmodel"
	"github.com/google/uuid"
)

// object is one JSON object of a body being decoded: its members, its path
// (for invalid-params names) and the error list it reports to. A member
// that is absent or null reads as absent, the client sending null for
// every member its caller left out.
type object struct {
	m    map[string]json.RawMessage
	path string
	e    *blockmodel.ValidationError
}

// decodeBody reads a request body that must be a JSON object (another body
// is reported under the name "body") with read, which reports into e; when
// anything was reported the result is nil and every failure one
// *blockmodel.ValidationError.
func decodeBody[T any](body []byte, read func(o object, e *blockmodel.ValidationError) *T) (*T, error) {
	e := &blockmodel.ValidationError{}
	o, ok := parseObject(body, "", e)
	if !ok {
		if len(e.Params) == 0 {
			e.Add("body", "must be a JSON object")
		}
		return nil, e.Err()
	}
	v := read(o, e)
	if err := e.Err(); err != nil {
		return nil, err
	}
	return v, nil
}

// parseObject reads raw as an object named path; an absent or null value
// gives ok false (not an error), another JSON type is reported.
func parseObject(raw json.RawMessage, path string, e *blockmodel.ValidationError) (object, bool) {
	o := object{path: path, e: e}
	if isNull(raw) {
		return o, false
	}
	if err := json.Unmarshal(raw, &o.m); err != nil || o.m == nil {
		e.Add(nameOr(path, "body"), "must be a JSON object")
		return o, false
	}
	return o, true
}

func nameOr(path, alt string) string {
	if path == "" {
		return alt
	}
	return path
}

// isNull reports an absent or null value.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

func (o object) name(member string) string {
	if o.path == "" {
		return member
	}
	return o.path + "." + member
}

// raw returns a member's JSON, nil when absent or null.
func (o object) raw(member string) json.RawMessage {
	r := o.m[member]
	if isNull(r) {
		return nil
	}
	return r
}

func (o object) has(member string) bool { return o.raw(member) != nil }

// required reports an absent member.
func (o object) required(member string) bool {
	if o.has(member) {
		return true
	}
	o.e.Add(o.name(member), "is required")
	return false
}

// str reads a string member: nil when absent.
func (o object) str(member string) *string { return scalar[string](o, member, "must be a string") }

// boolean reads a boolean member: nil when absent.
func (o object) boolean(member string) *bool { return scalar[bool](o, member, "must be true or false") }

// scalar reads a member holding a JSON value of Go type T: nil when absent;
// a value of another type is reported with reason.
func scalar[T any](o object, member, reason string) *T {
	r := o.raw(member)
	if r == nil {
		return nil
	}
	var v T
	if err := json.Unmarshal(r, &v); err != nil {
		o.e.Add(o.name(member), "%s", reason)
		return nil
	}
	return &v
}

// number reads a number member (JSON has no infinities or NaN, so it is
// finite): nil when absent.
func (o object) number(member string) *float64 {
	return scalar[float64](o, member, "must be a finite number")
}

// integer reads an integral number member (25 and 25.0 alike): nil when
// absent.
func (o object) integer(member string) *int64 {
	r := o.raw(member)
	if r == nil {
		return nil
	}
	t := string(bytes.TrimSpace(r))
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return &n
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		o.e.Add(o.name(member), "must be an integer")
		return nil
	}
	n := int64(f)
	return &n
}

// strings reads a list of strings: nil when absent.
func (o object) strings(member string) []string {
	r := o.raw(member)
	if r == nil {
		return nil
	}
	var s []string
	if err := json.Unmarshal(r, &s); err != nil {
		o.e.Add(o.name(member), "must be a list of strings")
		return nil
	}
	if s == nil {
		s = []string{}
	}
	return s
}

// list reads a list of JSON values: nil when absent.
func (o object) list(member string) []json.RawMessage {
	r := o.raw(member)
	if r == nil {
		return nil
	}
	var l []json.RawMessage
	if err := json.Unmarshal(r, &l); err != nil {
		o.e.Add(o.name(member), "must be a list")
		return nil
	}
	if l == nil {
		l = []json.RawMessage{}
	}
	return l
}

// objects returns the items of a list member that are objects, named
// member[i]; a null item is reported as not being shape, another non-object
// as not an object.
func (o object) objects(member, shape string) []object {
	var out []object
	for i, raw := range o.list(member) {
		p, ok := parseObject(raw, o.name(member)+"["+strconv.Itoa(i)+"]", o.e)
		if !ok {
			if isNull(raw) {
				o.e.Add(p.path, "must be %s", shape)
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

// requiredStr reads a required string member: nil (reported) when absent
// or no string.
func (o object) requiredStr(member string) *string {
	if !o.required(member) {
		return nil
	}
	return o.str(member)
}

// uuidMember reads a UUID string member: nil when absent.
func (o object) uuidMember(member string) *uuid.UUID {
	s := o.str(member)
	if s == nil {
		return nil
	}
	u, err := uuid.Parse(*s)
	if err != nil || strings.Count(*s, "-") != 4 {
		o.e.Add(o.name(member), "must be a UUID")
		return nil
	}
	return &u
}

// enum reads a string member that must be one of values; def when absent.
func (o object) enum(member, def string, values ...string) string {
	s := o.str(member)
	if s == nil {
		return def
	}
	for _, v := range values {
		if *s == v {
			return v
		}
	}
	o.e.Add(o.name(member), "must be one of %s, not %q", strings.Join(values, ", "), *s)
	return def
}

// maxLen reports a string longer than n characters.
func (o object) maxLen(member string, s *string, n int) {
	if s != nil && len([]rune(*s)) > n {
		o.e.Add(o.name(member), "must be at most %d characters", n)
	}
}

// tags reads a free JSON object member (column tags): nil when absent. The
// object must be at most 10 KiB as JSON, its keys 1-100 characters without
// a leading space or dot or any of / \ : > < | ? " *, unique
// case-insensitively.
func (o object) tags(member string) json.RawMessage {
	r := o.raw(member)
	if r == nil {
		return nil
	}
	name := o.name(member)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil || m == nil {
		o.e.Add(name, "must be a JSON object")
		return nil
	}
	if len(bytes.TrimSpace(r)) > 10*1024 {
		o.e.Add(name, "must be at most 10 KiB as JSON")
	}
	seen := map[string]bool{}
	for k := range m {
		if reason := keyRule(k); reason != "" {
			o.e.Add(name+"."+k, "%s", reason)
		}
		lk := strings.ToLower(k)
		if seen[lk] {
			o.e.Add(name+"."+k, "duplicates another key (keys are unique case-insensitively)")
		}
		seen[lk] = true
	}
	return bytes.TrimSpace(r)
}

// keyRule is the reason a tag key is invalid, "" when it is valid.
func keyRule(k string) string {
	switch n := len([]rune(k)); {
	case n == 0 || n > 100:
		return "keys must be 1-100 characters"
	case k[0] == ' ' || k[0] == '.' || k[0] == '\t':
		return "keys must not start with a space or a dot"
	case strings.ContainsAny(k, `/\:><|?"*`):
		return `keys must not contain any of / \ : > < | ? " *`
	}
	return ""
}
