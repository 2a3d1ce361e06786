package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// checkMembers records every member of raw that the rules of obj do not
// declare, at every nesting level, as "unknown member" with the closest
// declared name when one is close enough (a misspelt member is an error,
// never a default silently used in its place). Values that are not of the
// declared JSON type are left to the decoder, which names them. depth is
// the JSON nesting level of raw (0 for the parameters object).
func checkMembers(raw json.RawMessage, obj *object, name string, p *problems, depth int) {
	if obj == nil || depth > maxCheckDepth {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	rules := obj.applicable(m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		at := k
		if name != "" {
			at = name + "." + k
		}
		r := findRule(rules, k)
		if r == nil && obj.values != nil {
			r = obj.values
		}
		if r == nil {
			if tag, when := obj.variantOf(k); tag != "" {
				p.add(at, "applies only when %s is %s", tag, strings.Join(when, " or "))
				continue
			}
			reason := "unknown member"
			if s := closest(k, obj.names()); s != "" {
				reason += fmt.Sprintf("; did you mean %q?", s)
			}
			p.add(at, "%s", reason)
			continue
		}
		checkRule(m[k], r, at, p, depth+1)
	}
}

// maxCheckDepth is the deepest JSON nesting level checkMembers descends to.
// Only the recursive filter rule nests without bound, and the decoder
// refuses a filter nested more than 32 levels deep (filterExpr); the
// deepest request it accepts is about 70 levels deep (each filter level is
// an object and its filters array). Each level re-reads the JSON below it,
// so an unbounded walk of a body of filters nested thousands deep (up to
// encoding/json's 10,000 levels) took seconds of CPU and quadratic memory
// per request.
const maxCheckDepth = 96

// checkRule checks the members of the objects inside one value, at JSON
// nesting level depth.
func checkRule(raw json.RawMessage, r *rule, name string, p *problems, depth int) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || r == nil || depth > maxCheckDepth {
		return
	}
	switch r.kind {
	case kObject:
		checkMembers(raw, r.obj, name, p, depth)
	case kArray:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return
		}
		for i, it := range items {
			ir := r.items
			if i == 0 && r.first != nil {
				ir = r.first
			}
			checkRule(it, ir, fmt.Sprintf("%s[%d]", name, i), p, depth+1)
		}
	case kOneOf:
		// The form is chosen by the value's JSON type: an object checks
		// against the object form, an array against the array form.
		want := map[byte]kind{'{': kObject, '[': kArray}[raw[0]]
		for _, a := range r.alts {
			if (raw[0] == '{' || raw[0] == '[') && a.kind == want {
				checkRule(raw, a, name, p, depth)
				return
			}
		}
	}
}

// applicable returns the rules of the members an object may have: its own
// fields and those of the variant its tag selects (every variant's, when
// the tag is absent or has no variant: the decoder names that).
func (o *object) applicable(m map[string]json.RawMessage) []*rule {
	out := append([]*rule(nil), o.fields...)
	if o.tag == "" {
		return out
	}
	var tag string
	if raw, ok := m[o.tag]; ok {
		json.Unmarshal(raw, &tag)
	}
	for _, v := range o.variants {
		if slices.Contains(v.when, tag) {
			return append(out, v.obj.applicable(m)...)
		}
	}
	for _, v := range o.variants {
		out = append(out, v.obj.all()...)
	}
	return out
}

// variantOf finds a member declared only in variants of the object: the
// tag member that selects them and the tag values that do.
func (o *object) variantOf(key string) (tag string, when []string) {
	for _, v := range o.variants {
		if findRule(v.obj.fields, key) != nil {
			when = append(when, v.when...)
			continue
		}
		if t, _ := v.obj.variantOf(key); t != "" {
			when = append(when, v.when...) // a member of a variant of this variant
		}
	}
	if len(when) > 0 {
		return o.tag, when
	}
	return "", nil
}

// all returns the rules of every member an object declares, in all its
// variants.
func (o *object) all() []*rule {
	out := append([]*rule(nil), o.fields...)
	for _, v := range o.variants {
		out = append(out, v.obj.all()...)
	}
	return out
}

// names returns the member names an object declares, in all its variants.
func (o *object) names() []string {
	var out []string
	for _, r := range o.all() {
		out = append(out, r.name)
	}
	return out
}

func findRule(rules []*rule, key string) *rule {
	for _, r := range rules {
		if r.name == key {
			return r
		}
	}
	return nil
}

// closest returns the candidate nearest to s by edit distance (ignoring
// case), when it is close enough to be a likely misspelling: at most one
// edit per three characters, and at least one.
func closest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == "" || c == s {
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	n := max(utf8.RuneCountInString(s), utf8.RuneCountInString(best))
	if bestD < 0 || bestD > max(1, n/3) {
		return ""
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// in runes: insertions, deletions, substitutions and transpositions of two
// adjacent runes ("nmae" is one edit from "name").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
