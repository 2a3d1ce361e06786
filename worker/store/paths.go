package store

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxNameLength bounds the object name (last path segment): the seed's error
// text says the name "must be less than 256 characters" and the issue says
// "name under 256 characters", so 256 characters is rejected.
const MaxNameLength = 255

// invalidPathChars are the symbols rejected in paths (seed 2.4 rule 4 names
// "invalid symbols" without listing them): the characters Windows forbids in
// file names, plus control characters.
const invalidPathChars = `\:*?"<>|`

// NormalisePath checks an object path and returns it without a leading slash.
// It enforces seed 2.4 rules 3 and 4: no empty, "." or ".." segments, no
// invalid symbols, a name shorter than 256 characters (400 Invalid Path), a
// .json extension (400 Object Error), and, when checkWhitespace is set (the
// request's API-Preview header lists enable-no-leading-or-trailing-whitespaces-
// check), no segment with leading or trailing spaces.
func NormalisePath(p string, checkWhitespace bool) (string, error) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "", ErrInvalidPath("the path is empty")
	}
	if !utf8.ValidString(p) {
		return "", ErrInvalidPath("the path is not valid UTF-8")
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		switch {
		case s == "":
			return "", ErrInvalidPath(fmt.Sprintf("path %q has an empty segment", p))
		case s == "." || s == "..":
			return "", ErrInvalidPath(fmt.Sprintf("path %q has a %q segment", p, s))
		case strings.ContainsAny(s, invalidPathChars):
			return "", ErrInvalidPath(fmt.Sprintf("path %q contains invalid symbols (any of %s)", p, invalidPathChars))
		case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return "", ErrInvalidPath(fmt.Sprintf("path %q contains control characters", p))
		case checkWhitespace && strings.TrimSpace(s) != s:
			return "", ErrInvalidPath(fmt.Sprintf("path segment %q has leading or trailing whitespace; such names are not permitted", s))
		}
	}
	name := segs[len(segs)-1]
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		return "", ErrInvalidPath(fmt.Sprintf("the object name is too long (%d characters): it must be less than 256 characters", n))
	}
	if !strings.HasSuffix(strings.ToLower(name), ".json") || len(name) == len(".json") {
		return "", ErrObjectError(fmt.Sprintf("the object name %q must have a .json extension", name))
	}
	return p, nil
}

// pathKey is the case-insensitive identity of a path (names and paths are
// case-insensitive but case-preserving, seed 2.4 rule 2).
func pathKey(p string) string { return strings.ToLower(p) }

// suffixedPath returns p with " (n)" inserted before the .json extension:
// "a/b.json" -> "a/b (1).json".
func suffixedPath(p string, n int) string {
	ext := p[len(p)-len(".json"):]
	return fmt.Sprintf("%s (%d)%s", p[:len(p)-len(ext)], n, ext)
}

// objectName returns the last segment of a path.
func objectName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// PreviewWhitespaceCheck is the API-Preview flag that turns on the
// whitespace-in-segments check (seed 9).
const PreviewWhitespaceCheck = "enable-no-leading-or-trailing-whitespaces-check"

// PreviewHeaderEnables reports whether an API-Preview header value lists
// flag (values are comma-separated).
func PreviewHeaderEnables(header, flag string) bool {
	for _, v := range strings.Split(header, ",") {
		if strings.EqualFold(strings.TrimSpace(v), flag) {
			return true
		}
	}
	return false
}
