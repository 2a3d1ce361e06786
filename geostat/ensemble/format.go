package ensemble

import (
	"math"
	"strconv"
	"strings"
)

// FormatNumber writes x as the output names of the tasks write their levels
// and cutoffs: the shortest decimal that reads back as x, in the form of
// Python's repr of a float, the client's language: a decimal point always
// ("2.0", "0.1", "-3.5"), and exponent notation below 1e-4 or from 1e16 on
// ("1e-05", "1.5e+16"). NaN and ±Inf are written "nan", "inf" and "-inf".
func FormatNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	if a := math.Abs(x); a != 0 && (a < 1e-4 || a >= 1e16) {
		// Go's shortest 'e' form is Python's: at least two exponent
		// digits with a sign ("1e-05").
		return strconv.FormatFloat(x, 'e', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}
