package tasks

import (
	"math"
	"strings"
)

// SchemaRefPrefix is where the named request schemas live in the OpenAPI
// document: RequestSchema refers to them as SchemaRefPrefix + name.
const SchemaRefPrefix = "#/components/schemas/"

// RequestSchema returns the JSON Schema (draft 2020-12, the OpenAPI 3.1
// dialect) of a task's request body under a topic (TopicSeed or
// TopicCurrent): the parameters object, bare or wrapped as
// {"parameters": {...}}. It is rendered from the same rule tables the
// decoder reads, so every body the decoder accepts validates. The decoder
// alone checks what JSON Schema cannot state: the checks across members
// (named in the descriptions), the filter nesting depth, and what the
// references point to.
// Named schemas are referenced under SchemaRefPrefix; RequestComponents
// returns them. ok is false for an unknown task.
func RequestSchema(topic, task string) (schema map[string]any, ok bool) {
	o := tables.request(topic, task)
	if o == nil {
		return nil, false
	}
	ref := map[string]any{"$ref": SchemaRefPrefix + o.ref}
	return map[string]any{
		"description": "The task's parameters, bare or wrapped as {\"parameters\": {...}}; a member that no rule declares is refused (422, with the closest known name) and null counts as absent.",
		"if":          map[string]any{"type": "object", "required": []string{"parameters"}, "maxProperties": 1},
		"then":        map[string]any{"type": "object", "properties": map[string]any{"parameters": ref}},
		"else":        ref,
	}, true
}

// RequestComponents returns the named schemas that RequestSchema refers
// to, by name.
func RequestComponents() map[string]any {
	out := make(map[string]any, len(tables.shared))
	for name, o := range tables.shared {
		out[name] = objectSchema(o, false)
	}
	return out
}

// objectSchema renders an object's members and variants; inline objects
// that may be null say so.
func objectSchema(o *object, nullable bool) map[string]any {
	s := map[string]any{"type": typ("object", nullable)}
	if o.doc != "" {
		s["description"] = o.doc
	}
	props, req := members(o)
	if len(props) > 0 {
		s["properties"] = props
	}
	if len(req) > 0 {
		s["required"] = req
	}
	// The decoder refuses the members no rule declares (checkMembers):
	// a map such as tags takes any member whose value fits its rule.
	switch {
	case o.values != nil:
		s["additionalProperties"] = ruleSchema(o.values, !o.values.required)
	case o.tag != "":
		// The variants' members are declared in the oneOf branches.
		s["unevaluatedProperties"] = false
	default:
		s["additionalProperties"] = false
	}
	if o.tag != "" {
		var all []string
		var branches []any
		for _, v := range o.variants {
			all = append(all, v.when...)
			b := objectSchema(v.obj, false)
			delete(b, "type")
			// The object itself refuses the undeclared members.
			delete(b, "additionalProperties")
			delete(b, "unevaluatedProperties")
			props, _ := b["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			props[o.tag] = map[string]any{"enum": v.when}
			b["properties"] = props
			branches = append(branches, b)
		}
		if t, ok := props[o.tag].(map[string]any); ok && o.lookup(o.tag).enum == nil {
			t["enum"] = all
		}
		branch := map[string]any{"oneOf": branches}
		if nullable {
			// The variants apply to an object only.
			branch = map[string]any{"if": map[string]any{"type": "object"}, "then": branch}
			s["allOf"] = []any{branch}
		} else {
			s["oneOf"] = branches
		}
	}
	return s
}

// members renders an object's own members and the names of the required
// ones.
func members(o *object) (map[string]any, []string) {
	props := map[string]any{}
	var req []string
	for _, r := range o.fields {
		props[r.name] = ruleSchema(r, !r.required)
		if r.required {
			req = append(req, r.name)
		}
	}
	return props, req
}

func typ(t string, nullable bool) any {
	if nullable {
		return []string{t, "null"}
	}
	return t
}

// ruleSchema renders one member; nullable members accept null, which the
// decoder reads as absent.
func ruleSchema(r *rule, nullable bool) map[string]any {
	var s map[string]any
	switch r.kind {
	case kString, kObjectRef:
		s = map[string]any{"type": typ("string", nullable)}
		if r.required {
			s["minLength"] = 1
		}
		if r.enum != nil {
			enum := make([]any, 0, len(r.enum)+1)
			for _, e := range r.enum {
				enum = append(enum, e)
			}
			if nullable {
				enum = append(enum, nil)
			}
			s["enum"] = enum
		}
		if r.pattern != "" {
			s["pattern"] = r.pattern
		}
		if r.kind == kObjectRef {
			s["format"] = "uri-reference"
		}
	case kInteger:
		s = map[string]any{"type": typ("integer", nullable)}
		if r.imin != math.MinInt64 {
			s["minimum"] = r.imin
		}
		if r.imax != math.MaxInt64 {
			s["maximum"] = r.imax
		}
	case kNumber:
		s = map[string]any{"type": typ("number", nullable)}
		switch {
		case r.minExcl:
			s["exclusiveMinimum"] = r.min
		case r.hasMin:
			s["minimum"] = r.min
		}
		if r.hasMax {
			s["maximum"] = r.max
		}
	case kBoolean:
		s = map[string]any{"type": typ("boolean", nullable)}
	case kObject:
		if r.obj.ref == "" {
			s = objectSchema(r.obj, nullable)
		} else {
			s = refSchema(r.obj.ref, nullable)
		}
	case kArray:
		s = map[string]any{"type": typ("array", nullable), "items": ruleSchema(r.items, !r.items.required)}
		if r.first != nil {
			s["prefixItems"] = []any{ruleSchema(r.first, !r.first.required)}
		}
		if r.minItems > 0 {
			s["minItems"] = r.minItems
		}
		if r.maxItems > 0 {
			s["maxItems"] = r.maxItems
		}
	case kNull:
		s = map[string]any{"type": "null"}
	case kOneOf:
		var alts []any
		for _, a := range r.alts {
			alts = append(alts, ruleSchema(a, false))
		}
		if nullable {
			alts = append(alts, map[string]any{"type": "null"})
		}
		s = map[string]any{"oneOf": alts}
	}
	if r.doc != "" {
		if d, ok := s["description"].(string); ok && d != "" {
			s["description"] = r.doc + ". " + d
		} else {
			s["description"] = r.doc
		}
	}
	if r.def != nil && !r.required {
		s["default"] = r.def
	}
	return s
}

// refSchema refers to a named schema, allowing null when nullable.
func refSchema(name string, nullable bool) map[string]any {
	ref := map[string]any{"$ref": SchemaRefPrefix + name}
	if !nullable {
		return ref
	}
	return map[string]any{"anyOf": []any{ref, map[string]any{"type": "null"}}}
}

// taskSchemaName names the schema of a task's parameters under a topic,
// e.g. SeedKnnParameters and KrigingParameters.
func taskSchemaName(topic, task string) string {
	var b strings.Builder
	if topic == TopicSeed {
		b.WriteString("Seed")
	}
	for _, w := range strings.Split(task, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	b.WriteString("Parameters")
	return b.String()
}
