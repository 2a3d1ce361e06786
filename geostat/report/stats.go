package report

import (
	"cmp"
	"math"
	"slices"

	"github.com/geostat-engine/geostat/geostat"
)

// Probabilities returns the cumulative probabilities of the quantiles
// reported for the data, the reference and every realisation: 0.05, 0.10,
// …, 0.95 (a new slice).
func Probabilities() []float64 { return slices.Clone(probabilities) }

// probabilities are the values Probabilities returns.
var probabilities = func() []float64 {
	p := make([]float64, 19)
	for i := range p {
		p[i] = float64(i+1) / 20
	}
	return p
}()

// qqProbabilities are the probabilities of the CDF and QQ curves: 0.01,
// 0.02, …, 0.99.
var qqProbabilities = func() []float64 {
	p := make([]float64, 99)
	for i := range p {
		p[i] = float64(i+1) / 100
	}
	return p
}()

// Moments summarises a sample: count, (weighted) mean and variance, extremes
// and quantiles.
type Moments struct {
	// Count is the number of finite values.
	Count int `json:"count"`
	// Mean is Σ w z / Σ w.
	Mean Number `json:"mean"`
	// Variance is the population variance Σ w (z − mean)² / Σ w (no
	// small-sample correction).
	Variance Number `json:"variance"`
	// Min and Max are the extreme values.
	Min Number `json:"min"`
	Max Number `json:"max"`
	// Quantiles are the values at Probabilities() (see Quantile).
	Quantiles Series `json:"quantiles"`
}

// Summarise returns the moments of the finite values with optional weights
// (nil for equal weights; a value's weight must be ≥ 0 and finite) and the
// quantiles at probs. Quantiles interpolate linearly between the mid-step
// plotting positions p_i = (cw_{i−1} + cw_i)/2 of the sorted values (cw the
// normalised cumulative weights; (i − ½)/n for equal weights, the GSLIB
// nscore convention; tied values keep their input order) and clamp to the
// extreme values outside [p_1, p_n].
// With no finite value every number is NaN.
func Summarise(values, weights []float64, probs []float64) Moments {
	type zw struct{ z, w float64 }
	s := make([]zw, 0, len(values))
	for i, z := range values {
		if math.IsNaN(z) || math.IsInf(z, 0) {
			continue
		}
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		s = append(s, zw{z, w})
	}
	m := Moments{Count: len(s), Mean: nan(), Variance: nan(), Min: nan(), Max: nan(), Quantiles: nanSeries(len(probs))}
	sw := 0.0
	for _, e := range s {
		sw += e.w
	}
	if len(s) == 0 || !(sw > 0) {
		return m
	}
	slices.SortStableFunc(s, func(a, b zw) int { return cmp.Compare(a.z, b.z) }) // ties keep input order
	z := make([]float64, len(s))
	cp := make([]float64, len(s))
	mean, cw := 0.0, 0.0
	for i, e := range s {
		z[i] = e.z
		mean += e.w * e.z
		cp[i] = (cw + (cw + e.w)) / 2 / sw
		cw += e.w
	}
	mean /= sw
	v := 0.0
	for _, e := range s {
		d := e.z - mean
		v += e.w * d * d
	}
	m.Mean, m.Variance = Number(mean), Number(v/sw)
	m.Min, m.Max = Number(z[0]), Number(z[len(z)-1])
	for k, p := range probs {
		m.Quantiles[k] = interpolate(cp, z, p)
	}
	return m
}

// Quantile returns the p-quantile of sorted values with equal weights: linear
// interpolation between the plotting positions (i − ½)/n, clamped to the
// extremes (see Summarise). sorted must be ascending and free of NaN.
func Quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	x := p*float64(n) - 0.5 // fractional index of p
	if x <= 0 {
		return sorted[0]
	}
	if x >= float64(n-1) {
		return sorted[n-1]
	}
	i := int(x)
	f := x - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}

// interpolate returns y at x on the piecewise-linear curve through (xs, ys),
// xs non-decreasing, clamped outside; on a jump (equal xs) the lower y.
func interpolate(xs, ys []float64, x float64) float64 {
	n := len(xs)
	if x <= xs[0] {
		return ys[0]
	}
	if x >= xs[n-1] {
		return ys[n-1]
	}
	j, _ := slices.BinarySearch(xs, x) // xs[j-1] < x ≤ xs[j]
	if xs[j] == x {
		return ys[j]
	}
	x0, x1 := xs[j-1], xs[j]
	return ys[j-1] + (ys[j]-ys[j-1])*(x-x0)/(x1-x0)
}

// KolmogorovDistance returns sup_z |F_n(z) − F(z)| between the empirical CDF
// F_n of sorted (ascending, no NaN) and a continuous CDF F: the largest of
// i/n − F(z_(i)) and F(z_(i)) − (i − 1)/n over i = 1..n.
func KolmogorovDistance(sorted []float64, cdf func(float64) float64) float64 {
	n := float64(len(sorted))
	d := 0.0
	for i, z := range sorted {
		f := cdf(z)
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	if len(sorted) == 0 {
		return math.NaN()
	}
	return d
}

// ReferenceMoments returns the mean and variance of a distribution,
// ∫ F⁻¹(p) dp and ∫ (F⁻¹(p) − mean)² dp over (0, 1). Between table nodes F⁻¹
// is linear in p and the integrals are exact; the tails (power models, or
// the clamp without extrapolation) are integrated numerically with the
// substitution p = p₁t⁴ (lower) and p = pₙ + (1 − pₙ)t⁴ (upper), which
// smooths the power singularities, by a composite 4-point Gauss–Legendre
// rule of 256 panels.
func ReferenceMoments(d *geostat.Distribution) (mean, variance float64) {
	mean = quantileIntegral(d, 0, false)
	return mean, quantileIntegral(d, mean, true)
}

// quantileIntegral returns ∫ (F⁻¹(p) − c) dp, or ∫ (F⁻¹(p) − c)² dp when
// square is true, over (0, 1) (see ReferenceMoments for the quadrature).
func quantileIntegral(d *geostat.Distribution, c float64, square bool) float64 {
	g := func(z float64) float64 {
		if square {
			return (z - c) * (z - c)
		}
		return z - c
	}
	n := d.Len()
	sum := 0.0
	for j := 0; j+1 < n; j++ {
		z0, p0 := d.Node(j)
		z1, p1 := d.Node(j + 1)
		a, b := z0-c, z1-c
		if square { // ∫ of the square of a linear function
			sum += (p1 - p0) * (a*a + a*b + b*b) / 3
		} else {
			sum += (p1 - p0) * (a + b) / 2
		}
	}
	_, pFirst := d.Node(0)
	_, pLast := d.Node(n - 1)
	// Composite 4-point Gauss–Legendre over t ∈ [0, 1], 256 panels.
	const panels = 256
	for i := range panels {
		for k, x := range gaussNodes {
			t := (float64(i) + (1+x)/2) / panels
			w := gaussWeights[k] / 2 / panels
			t3 := t * t * t
			// Lower tail: p = p₁t⁴, dp = 4p₁t³ dt; upper: p = pₙ + (1 − pₙ)t⁴.
			sum += w * 4 * pFirst * t3 * g(d.Quantile(pFirst*t3*t))
			sum += w * 4 * (1 - pLast) * t3 * g(d.Quantile(pLast+(1-pLast)*t3*t))
		}
	}
	return sum
}

// gaussNodes and gaussWeights are the 4-point Gauss–Legendre rule on
// [−1, 1].
var (
	gaussNodes   = [4]float64{-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526}
	gaussWeights = [4]float64{0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538}
)

func nanSeries(n int) Series {
	s := make(Series, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}
