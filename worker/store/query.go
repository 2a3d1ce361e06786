package store

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geostat-engine/geostat/worker/objects"
)

// DefaultLimit is the default page size of listings (seed 8).
const DefaultLimit = 5000

// MaxLimit is the largest page size accepted (the seed does not state one).
const MaxLimit = 100000

// Filter is one filter of an organisation listing: Field is object_name,
// schema_id, created_at, modified_at, deleted_at, created_by, modified_by,
// deleted_by or object.<dotted path>; Op one of the seed 4.3 operators (eq,
// neq, in, nin, like, ilike, nlike, nilike, lt, lte, gt, gte) or "prefix" (the
// default of object_name: a case-sensitive prefix of the file name).
type Filter struct {
	Field  string
	Op     string
	Values []string
	times  []time.Time
}

// SortKey orders a listing by a field (see Filter for field names), ascending
// unless Desc.
type SortKey struct {
	Field string
	Desc  bool
}

// OrgQuery is a parsed organisation listing request.
type OrgQuery struct {
	Limit   int
	Offset  int
	Deleted bool
	Filters []Filter
	Sort    []SortKey
	// Access returns the caller's role in a workspace; workspaces without a
	// role are not listed. Nil lists every workspace.
	Access func(workspaceID string) (role string, ok bool)
	// Raw is the query as received, for the remote client.
	Raw url.Values
}

var (
	filterOps = map[string]bool{"eq": true, "neq": true, "in": true, "nin": true, "like": true, "ilike": true,
		"nlike": true, "nilike": true, "lt": true, "lte": true, "gt": true, "gte": true}
	dateOps  = map[string]bool{"eq": true, "lt": true, "lte": true, "gt": true, "gte": true}
	userOps  = map[string]bool{"eq": true, "neq": true, "in": true, "nin": true}
	sortable = map[string]bool{"created_at": true, "created_by": true, "modified_at": true, "modified_by": true,
		"object_name": true, "deleted_at": true}
)

// ParseOrgQuery parses the query parameters of the organisation listing:
// limit (default 5000), offset, deleted, order_by (comma-separated fields,
// each optionally prefixed asc: or desc:) and the filters of seed 4.3 in the
// prefix form operator:value. Bad paging is a 422 validation error, bad
// filters 422 filtering/invalid-params, bad sorts 422 sorting/invalid-params.
// Unrecognised parameters are ignored.
func ParseOrgQuery(q url.Values) (OrgQuery, error) {
	oq := OrgQuery{Limit: DefaultLimit, Raw: q}
	var err error
	if oq.Limit, oq.Offset, oq.Deleted, err = ParsePaging(q); err != nil {
		return OrgQuery{}, err
	}
	for _, v := range q["order_by"] {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			k := SortKey{Field: part}
			if f, ok := strings.CutPrefix(part, "desc:"); ok {
				k = SortKey{Field: f, Desc: true}
			} else if f, ok := strings.CutPrefix(part, "asc:"); ok {
				k.Field = f
			}
			if !sortable[k.Field] && !validObjectField(k.Field) {
				return OrgQuery{}, ErrInvalidSort(fmt.Sprintf("cannot order by %q: known fields are created_at, created_by, modified_at, modified_by, object_name, deleted_at and object.<field>", part))
			}
			oq.Sort = append(oq.Sort, k)
		}
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, raw := range q[name] {
			f, ok, err := parseFilter(name, raw)
			if err != nil {
				return OrgQuery{}, err
			}
			if ok {
				oq.Filters = append(oq.Filters, f)
			}
		}
	}
	return oq, nil
}

// ParsePaging parses limit, offset and deleted (422 validation errors).
func ParsePaging(q url.Values) (limit, offset int, deleted bool, err error) {
	limit = DefaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return 0, 0, false, ErrValidation(fmt.Sprintf("limit %q: want an integer in 1..%d", s, MaxLimit))
		}
		limit = n
	}
	if s := q.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, 0, false, ErrValidation(fmt.Sprintf("offset %q: want an integer >= 0", s))
		}
		offset = n
	}
	if s := q.Get("deleted"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return 0, 0, false, ErrValidation(fmt.Sprintf("deleted %q: want true or false", s))
		}
		deleted = b
	}
	return limit, offset, deleted, nil
}

func validObjectField(f string) bool {
	rest, ok := strings.CutPrefix(f, "object.")
	if !ok || rest == "" {
		return false
	}
	for _, p := range strings.Split(rest, ".") {
		if p == "" {
			return false
		}
	}
	return true
}

// splitOp splits "op:value" when op is one of allowed; otherwise the whole
// string is the value.
func splitOp(raw string, allowed map[string]bool) (op, value string, hasOp bool) {
	if i := strings.IndexByte(raw, ':'); i > 0 && allowed[raw[:i]] {
		return raw[:i], raw[i+1:], true
	}
	return "", raw, false
}

func parseFilter(name, raw string) (Filter, bool, error) {
	bad := func(format string, args ...any) (Filter, bool, error) {
		return Filter{}, false, ErrInvalidFilter(fmt.Sprintf("%s=%s: ", name, raw) + fmt.Sprintf(format, args...))
	}
	switch {
	case name == "object_name" || name == "schema_id" || strings.HasPrefix(name, "object."):
		if strings.HasPrefix(name, "object.") && !validObjectField(name) {
			return bad("invalid field")
		}
		op, v, hasOp := splitOp(raw, filterOps)
		if !hasOp {
			op = "eq"
			if name == "object_name" {
				op = "prefix"
			}
		}
		f := Filter{Field: name, Op: op, Values: []string{v}}
		if op == "in" || op == "nin" {
			f.Values = strings.Split(v, ",")
		}
		return f, true, nil
	case name == "created_at" || name == "modified_at" || name == "deleted_at":
		f := Filter{Field: name}
		parts := strings.Split(raw, ",")
		if len(parts) > 2 {
			return bad("at most 2 dates")
		}
		for _, p := range parts {
			op, v, hasOp := splitOp(p, dateOps)
			if !hasOp {
				if len(parts) > 1 {
					return bad("only one date may be given without an operator")
				}
				op = "eq"
			}
			t, err := parseDate(v)
			if err != nil {
				return bad("%v", err)
			}
			// Two dates form a range: both conditions must hold.
			f.Values = append(f.Values, op)
			f.times = append(f.times, t)
		}
		f.Op = "date"
		return f, true, nil
	case name == "created_by" || name == "modified_by" || name == "deleted_by":
		op, v, hasOp := splitOp(raw, userOps)
		if !hasOp {
			if i := strings.IndexByte(raw, ':'); i > 0 && !objects.IsUUID(raw) {
				return bad("operator %q is not allowed on user fields (eq, neq, in, nin)", raw[:i])
			}
			op = "eq"
		}
		vals := []string{v}
		if op == "in" || op == "nin" {
			vals = strings.Split(v, ",")
		}
		for i, u := range vals {
			if !objects.IsUUID(u) {
				return bad("%q is not a user UUID", u)
			}
			vals[i] = strings.ToLower(u)
		}
		return Filter{Field: name, Op: op, Values: vals}, true, nil
	}
	return Filter{}, false, nil
}

// parseDate parses ISO 8601 dates and date-times; UTC when no offset.
func parseDate(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 date", s)
}

// candidate is an object considered for a listing; doc loads its document
// (for object.<field> filters and sorts) on demand.
type candidate struct {
	item ListItem
	doc  func() (map[string]any, error)
	memo map[string]any
}

func (c *candidate) field(path string) (any, bool, error) {
	if c.memo == nil {
		d, err := c.doc()
		if err != nil {
			return nil, false, err
		}
		c.memo = d
	}
	var cur any = c.memo
	for _, p := range strings.Split(strings.TrimPrefix(path, "object."), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if cur, ok = m[p]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

func userID(u *User) string {
	if u == nil {
		return ""
	}
	return u.ID
}

// matches applies every filter to c.
func matches(filters []Filter, c *candidate) (bool, error) {
	for _, f := range filters {
		ok, err := matchFilter(f, c)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func matchFilter(f Filter, c *candidate) (bool, error) {
	it := &c.item
	switch f.Field {
	case "object_name":
		if f.Op == "prefix" {
			return strings.HasPrefix(it.Name, f.Values[0]), nil
		}
		return matchString(f.Op, f.Values, it.Path), nil
	case "schema_id":
		return matchString(f.Op, f.Values, it.Schema), nil
	case "created_at", "modified_at", "deleted_at":
		var t *time.Time
		switch f.Field {
		case "created_at":
			t = &it.CreatedAt
		case "modified_at":
			t = &it.ModifiedAt
		default:
			t = it.DeletedAt
		}
		if t == nil {
			return false, nil
		}
		for i, op := range f.Values {
			if !compareOp(op, t.Compare(f.times[i])) {
				return false, nil
			}
		}
		return true, nil
	case "created_by", "modified_by", "deleted_by":
		u := map[string]*User{"created_by": it.CreatedBy, "modified_by": it.ModifiedBy, "deleted_by": it.DeletedBy}[f.Field]
		return matchString(f.Op, f.Values, strings.ToLower(userID(u))), nil
	}
	v, ok, err := c.field(f.Field)
	if err != nil {
		return false, err
	}
	negative := f.Op == "neq" || f.Op == "nin" || f.Op == "nlike" || f.Op == "nilike"
	if !ok {
		return negative, nil
	}
	s, isScalar := scalarString(v)
	if !isScalar {
		return negative, nil
	}
	if num, isNum := v.(json.Number); isNum && (f.Op == "lt" || f.Op == "lte" || f.Op == "gt" || f.Op == "gte" || f.Op == "eq" || f.Op == "neq") {
		x, err1 := strconv.ParseFloat(string(num), 64)
		y, err2 := strconv.ParseFloat(f.Values[0], 64)
		if err1 == nil && err2 == nil {
			return compareOp(f.Op, cmp.Compare(x, y)), nil
		}
	}
	return matchString(f.Op, f.Values, s), nil
}

func scalarString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "null", true
	}
	return "", false
}

func compareOp(op string, c int) bool {
	switch op {
	case "eq":
		return c == 0
	case "neq":
		return c != 0
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	case "gt":
		return c > 0
	case "gte":
		return c >= 0
	}
	return false
}

func matchString(op string, vals []string, s string) bool {
	switch op {
	case "eq", "neq", "lt", "lte", "gt", "gte":
		return compareOp(op, strings.Compare(s, vals[0]))
	case "in":
		return slices.Contains(vals, s)
	case "nin":
		return !slices.Contains(vals, s)
	case "like":
		return glob(vals[0], s)
	case "nlike":
		return !glob(vals[0], s)
	case "ilike":
		return glob(strings.ToLower(vals[0]), strings.ToLower(s))
	case "nilike":
		return !glob(strings.ToLower(vals[0]), strings.ToLower(s))
	}
	return false
}

// glob matches s against a pattern whose only wildcard is * (any run).
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// sortCandidates orders by the sort keys, then by path and id.
func sortCandidates(cs []*candidate, keys []SortKey) error {
	var ferr error
	slices.SortStableFunc(cs, func(a, b *candidate) int {
		for _, k := range keys {
			c, err := compareField(k.Field, a, b)
			if err != nil && ferr == nil {
				ferr = err
			}
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		if c := strings.Compare(pathKey(a.item.Path), pathKey(b.item.Path)); c != 0 {
			return c
		}
		return strings.Compare(a.item.ObjectID, b.item.ObjectID)
	})
	return ferr
}

func compareField(field string, a, b *candidate) (int, error) {
	x, y := &a.item, &b.item
	switch field {
	case "created_at":
		return x.CreatedAt.Compare(y.CreatedAt), nil
	case "modified_at":
		return x.ModifiedAt.Compare(y.ModifiedAt), nil
	case "deleted_at":
		return compareTimePtr(x.DeletedAt, y.DeletedAt), nil
	case "created_by":
		return strings.Compare(userID(x.CreatedBy), userID(y.CreatedBy)), nil
	case "modified_by":
		return strings.Compare(userID(x.ModifiedBy), userID(y.ModifiedBy)), nil
	case "object_name":
		return strings.Compare(x.Name, y.Name), nil
	}
	va, oka, err := a.field(field)
	if err != nil {
		return 0, err
	}
	vb, okb, err := b.field(field)
	if err != nil {
		return 0, err
	}
	switch {
	case !oka && !okb:
		return 0, nil
	case !oka:
		return 1, nil // missing values last
	case !okb:
		return -1, nil
	}
	na, isNa := va.(json.Number)
	nb, isNb := vb.(json.Number)
	if isNa && isNb {
		fa, _ := strconv.ParseFloat(string(na), 64)
		fb, _ := strconv.ParseFloat(string(nb), 64)
		return cmp.Compare(fa, fb), nil
	}
	sa, _ := scalarString(va)
	sb, _ := scalarString(vb)
	return strings.Compare(sa, sb), nil
}

func compareTimePtr(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Compare(*b)
}
