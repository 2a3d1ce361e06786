package ties

import (
	"fmt"
	"math"
)

// Spread writes the k = len(z) strictly increasing values that replace a tie
// group of value v, whose next lower and next higher distinct values are lo
// and hi (−Inf or +Inf when there is none), following docs/math.md section 6
// step 5:
//
//	Δ = min(v − lo, hi − v) over the finite ones (max(|v|, 1)·1e-6 if none)
//	δ = τΔ/k,  z_q = v + (q − (k+1)/2)·δ,  q = 1..k
//
// which preserves the mean and keeps every value inside (v − Δ/4, v + Δ/4).
// When the symmetric values would fall below bound (−Inf for none), the
// one-sided z_q = v + (q − 1)·τ(hi − v)/k is used, which starts at v itself.
// If δ is too small to separate the values in float64, consecutive
// representable numbers around v (from v upwards for the one-sided case)
// are used instead. In every case the values stay strictly between the
// midpoints (lo + v)/2 and (v + hi)/2, computed as lo + (v − lo)/2 and
// v + (hi − v)/2 on both sides of every gap, so groups never overlap. An
// error reports a group that float64 cannot separate inside that interval.
func Spread(z []float64, v, lo, hi, bound float64) error {
	k := len(z)
	switch k {
	case 0:
		return nil
	case 1:
		z[0] = v
		return nil
	}
	lower, upper := math.Inf(-1), math.Inf(1)
	if !math.IsInf(lo, 0) {
		lower = lo + (v-lo)/2
	}
	if !math.IsInf(hi, 0) {
		upper = v + (hi-v)/2
	}
	delta := math.Min(v-lo, hi-v)
	if math.IsInf(delta, 1) {
		delta = lonelyGap(v)
	}

	d := Tau * delta / float64(k)
	for q := range z {
		z[q] = v + float64(2*q+1-k)/2*d
	}
	if z[0] < bound {
		up := hi - v
		if math.IsInf(up, 1) {
			up = lonelyGap(v)
		}
		d = Tau * up / float64(k)
		for q := range z {
			z[q] = v + float64(q)*d
		}
		if separated(z, v, upper, true) {
			return nil
		}
		z[0] = v
		for q := 1; q < k; q++ {
			z[q] = math.Nextafter(z[q-1], math.Inf(1))
		}
		if separated(z, v, upper, true) {
			return nil
		}
		return fmt.Errorf("%d equal values %g cannot be separated in float64 between %g and the next value %g", k, v, v, hi)
	}
	if separated(z, lower, upper, false) {
		return nil
	}
	c := (k - 1) / 2 // position of v itself
	z[c] = v
	for q := c - 1; q >= 0; q-- {
		z[q] = math.Nextafter(z[q+1], math.Inf(-1))
	}
	for q := c + 1; q < k; q++ {
		z[q] = math.Nextafter(z[q-1], math.Inf(1))
	}
	if separated(z, lower, upper, false) && z[0] >= bound {
		return nil
	}
	return fmt.Errorf("%d equal values %g cannot be separated in float64 between the neighbouring values %g and %g", k, v, lo, hi)
}

// separated reports whether z is strictly increasing and inside (lower,
// upper), or [lower, upper) when closed is true.
func separated(z []float64, lower, upper float64, closed bool) bool {
	if z[0] < lower || (!closed && z[0] == lower) || z[len(z)-1] >= upper {
		return false
	}
	for q := 1; q < len(z); q++ {
		if !(z[q] > z[q-1]) {
			return false
		}
	}
	return true
}
