package geostat

import "math"

// pClamp bounds probabilities before the normal quantile, so that scores stay
// within about ±7.03 (docs/math.md section 5).
const pClamp = 1e-12

// NormalCDF returns G(y), the standard normal cumulative distribution
// function, computed as ½ erfc(−y/√2) to keep precision in the lower tail.
func NormalCDF(y float64) float64 { return 0.5 * math.Erfc(-y/math.Sqrt2) }

// NormalQuantile returns G⁻¹(p), the standard normal quantile, for p
// clamped to [1e-12, 1 − 1e-12]. It uses erfcinv on the nearer tail so that
// no precision is lost for small p or p near 1. NaN gives NaN.
func NormalQuantile(p float64) float64 {
	if math.IsNaN(p) {
		return p
	}
	if p < pClamp {
		p = pClamp
	} else if p > 1-pClamp {
		p = 1 - pClamp
	}
	if p < 0.5 {
		return -math.Sqrt2 * math.Erfcinv(2*p)
	}
	return math.Sqrt2 * math.Erfcinv(2*(1-p))
}
