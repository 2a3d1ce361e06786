package scenarios

import (
	"fmt"
	"math"
)

// checkValues verifies an output slice: no infinities, every finite value
// inside [lo, hi], and at least minFinite finite values. It returns the
// number of finite values.
func checkValues(what string, v []float64, lo, hi float64, minFinite int) (int, error) {
	n := 0
	for i, x := range v {
		switch {
		case math.IsNaN(x):
			continue
		case math.IsInf(x, 0) || x < lo || x > hi:
			return n, fmt.Errorf("%s[%d] = %v is outside [%v, %v]", what, i, x, lo, hi)
		}
		n++
	}
	if n < minFinite {
		return n, fmt.Errorf("%s: %d finite values of %d, want at least %d", what, n, len(v), minFinite)
	}
	return n, nil
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	return lo, hi
}

// plural renders a count with its noun, singular for 1 ("1 realisation",
// "10 realisations").
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
