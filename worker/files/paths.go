package files

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/geostat-engine/geostat/worker/store"
)

// MaxNameLength bounds a file name (the last path segment): seed 8 says 256
// characters with the error text "less than 256", so 256 is rejected.
const MaxNameLength = store.MaxNameLength

// normalizePath checks a file path and returns it without a leading slash.
// The rules are store.NormalisePath's except its .json extension rule, which
// is for geoscience objects only; its invalid-path errors become the file
// area's invalid-path type.
func normalizePath(p string, checkWhitespace bool) (string, error) {
	p = strings.TrimPrefix(p, "/")
	if utf8.ValidString(p) {
		name := p[strings.LastIndexByte(p, '/')+1:]
		if n := utf8.RuneCountInString(name); n > MaxNameLength {
			return "", errInvalidPath(fmt.Sprintf("the file name is too long (%d characters): it must be less than 256 characters", n))
		}
	}
	norm, err := store.NormalisePath(p, checkWhitespace)
	if err == nil {
		return norm, nil
	}
	e := store.AsError(err)
	switch {
	case e != nil && e.Type == store.TypeObjectError:
		// Only the .json rule failed: NormalisePath checks it after every
		// path rule, so the path is valid for a file.
		return p, nil
	case e != nil && e.Type == store.TypeInvalidPath:
		return "", errInvalidPath(e.Detail)
	}
	return "", errInvalidPath(err.Error())
}

// pathKey is the case-insensitive identity of a path.
func pathKey(p string) string { return strings.ToLower(p) }

// fileName returns the last segment of a path.
func fileName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// CheckPath reports whether p is a valid file path (the rules of the file
// area, without the whitespace preview check), for callers that store files
// through the Go API.
func CheckPath(p string) error {
	_, err := normalizePath(p, false)
	return err
}
