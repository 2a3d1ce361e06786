package blockmodel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxCRSLength is the longest coordinate_reference_system, in characters.
const MaxCRSLength = 10000

var epsgCRS = regexp.MustCompile(`^EPSG:([0-9]{1,5})$`)

// CheckCRS checks a coordinate_reference_system syntactically (A.3.1,
// OPEN-40): EPSG:<1024…32767> or a WKT definition (KEYWORD[…] or
// KEYWORD(…)), at most MaxCRSLength characters. The error says why.
func CheckCRS(s string) error {
	if n := utf8.RuneCountInString(s); n > MaxCRSLength {
		return fmt.Errorf("must be at most %d characters, not %d", MaxCRSLength, n)
	}
	if m := epsgCRS.FindStringSubmatch(s); m != nil {
		if n, _ := strconv.Atoi(m[1]); n < 1024 || n > 32767 {
			return fmt.Errorf("EPSG code must be 1024-32767, not %d", n)
		}
		return nil
	}
	t := strings.TrimSpace(s)
	i := strings.IndexAny(t, "[(")
	if i <= 0 || !strings.HasSuffix(t, "]") && !strings.HasSuffix(t, ")") || strings.ContainsAny(t[:i], " \t\n") {
		return fmt.Errorf("must be EPSG:<code> or a WKT definition")
	}
	return nil
}
