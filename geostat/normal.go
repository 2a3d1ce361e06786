package geostat

import "math"

// pClamp bounds probabilities before the normal quantile, so that scores stay
// within about ±7.03 (docs/math.md section 5).
const pClamp = 1e-12

// NormalCDF returns G(y), the standard normal cumulative distribution
// function, computed as ½ erfc(−y/√2) to keep precision in the lower tail.
func NormalCDF(y float64) float64 { return 0.5 * math.Erfc(-y/math.Sqrt2) }

// NormalQuantile returns G⁻¹(p), the standard normal quantile. The nearer
// tail probability min(p, 1 − p) is clamped to at least 1e-12, so scores lie
// within ±7.0344838 and G⁻¹(1 − p) = −G⁻¹(p) for every p. NaN gives NaN.
//
// It evaluates Wichura's algorithm AS 241 (PPND16: rational minimax
// approximations in three regions of p, relative error about 1e-16) on the
// nearer tail, so that no precision is lost for small p or p near 1. Go's
// math.Erfcinv is not used: it loses up to 3e-6 in y near p = 1e-12
// (docs/math.md section 5).
func NormalQuantile(p float64) float64 {
	if math.IsNaN(p) {
		return p
	}
	q := p - 0.5
	if math.Abs(q) <= 0.425 {
		r := 0.180625 - q*q
		return q * ratpoly(&as241A, &as241B, r)
	}
	tail := p // the smaller of p and 1−p
	if q > 0 {
		tail = 1 - p
	}
	r := math.Sqrt(-math.Log(max(tail, pClamp)))
	var y float64
	if r <= 5 {
		y = ratpoly(&as241C, &as241D, r-1.6)
	} else {
		y = ratpoly(&as241E, &as241F, r-5)
	}
	if q < 0 {
		return -y
	}
	return y
}

// ratpoly evaluates num(x)/den(x) for degree-7 polynomials given by their
// coefficients from the constant term up (Horner's rule).
func ratpoly(num, den *[8]float64, x float64) float64 {
	n, d := num[7], den[7]
	for i := 6; i >= 0; i-- {
		n = n*x + num[i]
		d = d*x + den[i]
	}
	return n / d
}

// The coefficients of AS 241 (Wichura, Applied Statistics 37, 1988,
// pp. 477–484), constant term first: A/B for |p − ½| ≤ 0.425, C/D for
// r = √(−ln min(p, 1−p)) ≤ 5, E/F beyond.
var (
	as241A = [8]float64{3.387132872796366608, 133.14166789178437745, 1971.5909503065514427,
		13731.693765509461125, 45921.953931549871457, 67265.770927008700853,
		33430.575583588128105, 2509.0809287301226727}
	as241B = [8]float64{1, 42.313330701600911252, 687.1870074920579083,
		5394.1960214247511077, 21213.794301586595867, 39307.89580009271061,
		28729.085735721942674, 5226.495278852545925}
	as241C = [8]float64{1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055,
		3.64784832476320460504, 1.27045825245236838258, 0.24178072517745061177,
		0.0227238449892691845833, 7.7454501427834140764e-4}
	as241D = [8]float64{1, 2.05319162663775882187, 1.6763848301838038494,
		0.68976733498510000455, 0.14810397642748007459, 0.0151986665636164571966,
		5.475938084995344946e-4, 1.05075007164441684324e-9}
	as241E = [8]float64{6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358,
		0.29656057182850489123, 0.026532189526576123093, 0.0012426609473880784386,
		2.71155556874348757815e-5, 2.01033439929228813265e-7}
	as241F = [8]float64{1, 0.59983220655588793769, 0.13692988092273580531,
		0.0148753612908506148525, 7.868691311456132591e-4, 1.8463183175100546818e-5,
		1.4215117583164458887e-7, 2.04426310338993978564e-15}
)
