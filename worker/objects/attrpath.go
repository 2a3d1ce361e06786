package objects

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// RefKind says how an AttributeRef selects an attribute.
type RefKind int

// The ways of selecting an attribute (docs/objects.md 4.3).
const (
	// RefBare is a bare name: the attribute with this name, or else this
	// key, in the object's attribute lists.
	RefBare RefKind = iota + 1
	// RefName selects by name: list[?name=='x'] or /list/@name=x.
	RefName
	// RefKey selects by key: list[?key=='k'] or /list/@key=k.
	RefKey
	// RefIndex selects by position: list[2] or /list/2.
	RefIndex
)

// AttributeRef is a parsed attribute reference. Both forms of the compute
// tasks are accepted:
//
//   - expressions (the JMESPath subset the SDK emits):
//     locations.attributes[?name=='grade'], cell_attributes[?key=='…'],
//     cell_attributes[0], attributes[-1], a filter followed by "| [0]", or
//     a bare name such as grade;
//   - legacy element paths: /locations/attributes/@name=grade,
//     /cell_attributes/@key=…, /cell_attributes/0.
//
// String literals may be 'raw' (with \' and \\ escapes) or `"json"`.
type AttributeRef struct {
	Kind RefKind
	// List is the dotted path of the attribute list ("" for RefBare).
	List string
	// Value is the name or key selected (RefBare, RefName, RefKey).
	Value string
	// Index is the position for RefIndex; negative counts from the end.
	Index int
	// First is set by a trailing "| [0]": the first match is taken when
	// several attributes match a filter.
	First bool
}

// String renders the reference as an expression.
func (r AttributeRef) String() string {
	switch r.Kind {
	case RefName, RefKey:
		field := "name"
		if r.Kind == RefKey {
			field = "key"
		}
		s := r.List + "[?" + field + "==" + quoteLiteral(r.Value) + "]"
		if r.First {
			s += " | [0]"
		}
		return s
	case RefIndex:
		return r.List + "[" + strconv.Itoa(r.Index) + "]"
	}
	return r.Value
}

// ParseAttributeRef parses an attribute expression or element path.
func ParseAttributeRef(s string) (AttributeRef, error) {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return AttributeRef{}, fmt.Errorf("attribute reference: empty")
	case strings.HasPrefix(t, "/"):
		r, err := parseElementPath(t)
		if err != nil {
			return AttributeRef{}, fmt.Errorf("attribute reference %q: %w", s, err)
		}
		return r, nil
	case strings.ContainsAny(t, "[]|"):
		p := &exprParser{s: t}
		r, err := p.parse()
		if err != nil {
			return AttributeRef{}, fmt.Errorf("attribute reference %q: %w", s, err)
		}
		return r, nil
	}
	return AttributeRef{Kind: RefBare, Value: t}, nil
}

func parseElementPath(s string) (AttributeRef, error) {
	parts := strings.Split(s[1:], "/")
	if len(parts) < 2 {
		return AttributeRef{}, fmt.Errorf("element path needs a list and a selector")
	}
	// A name may itself contain "/": everything after "@name=" is the value.
	for i, p := range parts {
		if strings.HasPrefix(p, "@") {
			sel := strings.Join(parts[i:], "/")
			list, err := listPath(parts[:i])
			if err != nil {
				return AttributeRef{}, err
			}
			switch {
			case strings.HasPrefix(sel, "@name="):
				return AttributeRef{Kind: RefName, List: list, Value: sel[len("@name="):]}, nil
			case strings.HasPrefix(sel, "@key="):
				return AttributeRef{Kind: RefKey, List: list, Value: sel[len("@key="):]}, nil
			}
			return AttributeRef{}, fmt.Errorf("selector %q: want @name=… or @key=…", sel)
		}
	}
	last := parts[len(parts)-1]
	n, err := strconv.Atoi(last)
	if err != nil {
		return AttributeRef{}, fmt.Errorf("last segment %q: want @name=…, @key=… or an index", last)
	}
	list, err := listPath(parts[:len(parts)-1])
	if err != nil {
		return AttributeRef{}, err
	}
	return AttributeRef{Kind: RefIndex, List: list, Index: n}, nil
}

func listPath(segs []string) (string, error) {
	if len(segs) == 0 {
		return "", fmt.Errorf("missing attribute list")
	}
	for _, s := range segs {
		if !isIdentifier(s) {
			return "", fmt.Errorf("list segment %q is not an identifier", s)
		}
	}
	return strings.Join(segs, "."), nil
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// exprParser parses the JMESPath subset: ident(.ident)* followed by one
// bracket selector, optionally followed by "| [0]".
type exprParser struct {
	s   string
	pos int
}

func (p *exprParser) parse() (AttributeRef, error) {
	var segs []string
	for {
		id := p.ident()
		if id == "" {
			return AttributeRef{}, p.errorf("expected an identifier")
		}
		segs = append(segs, id)
		p.space()
		if !p.accept(".") {
			break
		}
		p.space()
	}
	r := AttributeRef{List: strings.Join(segs, ".")}
	if !p.accept("[") {
		return AttributeRef{}, p.errorf("expected [")
	}
	p.space()
	if p.accept("?") {
		p.space()
		field := p.ident()
		switch field {
		case "name":
			r.Kind = RefName
		case "key":
			r.Kind = RefKey
		default:
			return AttributeRef{}, p.errorf("filter field %q: want name or key", field)
		}
		p.space()
		if !p.accept("==") {
			return AttributeRef{}, p.errorf("expected ==")
		}
		p.space()
		lit, err := p.literal()
		if err != nil {
			return AttributeRef{}, err
		}
		r.Value = lit
	} else {
		n, err := p.integer()
		if err != nil {
			return AttributeRef{}, err
		}
		r.Kind, r.Index = RefIndex, n
	}
	p.space()
	if !p.accept("]") {
		return AttributeRef{}, p.errorf("expected ]")
	}
	p.space()
	if r.Kind != RefIndex && p.accept("|") {
		// "list[?name=='x'] | [0]": the first match; the filter already
		// unwraps a single match, so [0] changes nothing for unique names.
		r.First = true
		p.space()
		if !p.accept("[") {
			return AttributeRef{}, p.errorf("expected [ after |")
		}
		p.space()
		if n, err := p.integer(); err != nil || n != 0 {
			return AttributeRef{}, p.errorf("only | [0] may follow a filter")
		}
		p.space()
		if !p.accept("]") {
			return AttributeRef{}, p.errorf("expected ]")
		}
		p.space()
	}
	if p.pos != len(p.s) {
		return AttributeRef{}, p.errorf("unexpected trailing text")
	}
	return r, nil
}

func (p *exprParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *exprParser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func (p *exprParser) accept(tok string) bool {
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *exprParser) ident() string {
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.s[start:p.pos]
}

func (p *exprParser) integer() (int, error) {
	start := p.pos
	if p.pos < len(p.s) && p.s[p.pos] == '-' {
		p.pos++
	}
	for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil {
		return 0, p.errorf("expected an index or ?name==/?key== filter")
	}
	return n, nil
}

// literal parses 'raw string' or `json literal` (a JSON string).
func (p *exprParser) literal() (string, error) {
	if p.accept("'") {
		var b strings.Builder
		for p.pos < len(p.s) {
			c := p.s[p.pos]
			p.pos++
			switch c {
			case '\\':
				if p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '\\') {
					b.WriteByte(p.s[p.pos])
					p.pos++
				} else {
					b.WriteByte('\\')
				}
			case '\'':
				return b.String(), nil
			default:
				b.WriteByte(c)
			}
		}
		return "", p.errorf("unterminated string literal")
	}
	if p.accept("`") {
		end := strings.IndexByte(p.s[p.pos:], '`')
		if end < 0 {
			return "", p.errorf("unterminated JSON literal")
		}
		var v string
		if err := json.Unmarshal([]byte(p.s[p.pos:p.pos+end]), &v); err != nil {
			return "", p.errorf("JSON literal is not a string")
		}
		p.pos += end + 1
		return v, nil
	}
	return "", p.errorf("expected a string literal ('…' or `\"…\"`)")
}

// ResolveAttribute finds the attribute an expression or element path
// addresses. A bare name is looked up by name, then by key, in the object's
// attribute lists (primary list first). It fails when nothing or more than one
// attribute matches.
func (o *Object) ResolveAttribute(ref string) (*Attribute, error) {
	r, err := ParseAttributeRef(ref)
	if err != nil {
		return nil, err
	}
	return o.FindAttribute(r)
}

// FindAttribute resolves a parsed reference; see ResolveAttribute.
func (o *Object) FindAttribute(r AttributeRef) (*Attribute, error) {
	lists := o.AttributeLists()
	if len(lists) == 0 {
		return nil, fmt.Errorf("%s objects have no attributes", o.Schema.Kind)
	}
	if r.Kind == RefBare {
		for _, field := range []RefKind{RefName, RefKey} {
			var found []*Attribute
			for _, list := range lists {
				found = append(found, o.match(list, field, r.Value)...)
			}
			if len(found) == 1 {
				return found[0], nil
			}
			if len(found) > 1 {
				return nil, fmt.Errorf("attribute %q: %d attributes have this name", r.Value, len(found))
			}
		}
		return nil, fmt.Errorf("attribute %q: %s has no attribute with this name or key in %s; %s", r.Value, o.label(), strings.Join(lists, ", "), o.attributeNames(lists...))
	}
	if !o.hasList(r.List) {
		return nil, fmt.Errorf("attribute %s: %s has no attribute list %q (lists: %s)", r, o.Schema.Kind, r.List, strings.Join(lists, ", "))
	}
	if r.Kind == RefIndex {
		attrs := o.Attributes(r.List)
		i := r.Index
		if i < 0 {
			i += len(attrs)
		}
		if i < 0 || i >= len(attrs) {
			return nil, fmt.Errorf("attribute %s: index out of range (%d attributes)", r, len(attrs))
		}
		return &attrs[i], nil
	}
	found := o.match(r.List, r.Kind, r.Value)
	switch len(found) {
	case 0:
		field := "named"
		if r.Kind == RefKey {
			field = "with the key"
		}
		return nil, fmt.Errorf("attribute %s not found: %s has no attribute %s %q in %s; %s", r, o.label(), field, r.Value, r.List, o.attributeNames(r.List))
	case 1:
		return found[0], nil
	}
	if r.First {
		return found[0], nil
	}
	return nil, fmt.Errorf("attribute %s: %d attributes match", r, len(found))
}

// maxListedAttributes bounds the attributes an error message lists.
const maxListedAttributes = 20

// label names the object in messages: object "<name>" (<kind>).
func (o *Object) label() string {
	if o.Name == "" {
		return "the " + string(o.Schema.Kind) + " object"
	}
	return fmt.Sprintf("object %q (%s)", o.Name, o.Schema.Kind)
}

// attributeNames lists the attributes of lists for an error message, as
// "its attributes are: cu (key k-cu), au (key k-au)" (at most
// maxListedAttributes, then how many more), or "it has none".
func (o *Object) attributeNames(lists ...string) string {
	var names []string
	n := 0
	for _, list := range lists {
		for _, a := range o.Attributes(list) {
			n++
			if len(names) < maxListedAttributes {
				s := strconv.Quote(a.Name)
				if a.Key != "" && a.Key != a.Name {
					s += " (key " + strconv.Quote(a.Key) + ")"
				}
				names = append(names, s)
			}
		}
	}
	if n == 0 {
		return "it has no attributes there"
	}
	out := "its attributes are: " + strings.Join(names, ", ")
	if n > len(names) {
		out += fmt.Sprintf(" and %d more", n-len(names))
	}
	return out
}

func (o *Object) match(list string, field RefKind, value string) []*Attribute {
	var out []*Attribute
	attrs := o.Attributes(list)
	for i := range attrs {
		a := &attrs[i]
		if field == RefName && a.Name == value || field == RefKey && a.Key != "" && a.Key == value {
			out = append(out, a)
		}
	}
	return out
}
