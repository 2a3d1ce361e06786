package objects

import (
	"fmt"
	"sort"
	"strings"
)

// DataKeys walks a decoded document and returns the blob keys its array
// elements reference (a member "data" next to a member "length"), deduplicated
// and sorted, with SHA-256 keys lowercased. Values that are neither null, a
// SHA-256 digest nor a UUID are returned in invalid, rendered as text, with
// their JSON pointer (seed 2.4 rule 6).
func DataKeys(doc map[string]any) (keys []string, invalid []string) {
	seen := map[string]bool{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if d, ok := x["data"]; ok {
				if _, hasLen := x["length"]; hasLen && d != nil {
					s, isString := d.(string)
					switch {
					case isString && IsSHA256Key(s):
						seen[strings.ToLower(s)] = true
					case isString && IsUUID(s):
						seen[strings.ToLower(s)] = true
					default:
						invalid = append(invalid, fmt.Sprintf("%s/data: %v", path, d))
					}
				}
			}
			names := make([]string, 0, len(x))
			for k := range x {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				walk(x[k], path+"/"+escapePointer(k))
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", path, i))
			}
		}
	}
	walk(doc, "")
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, invalid
}
