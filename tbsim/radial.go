package tbsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/geostat-engine/geostat/geostat"
)

// radial draws the modulus ρ of the frequency vector of a spectral line
// process, in unit-range (reduced) units, for one structure type. ρ has the
// radial distribution of the structure's 3-D spectral measure, which is also
// the spectral density of its 1-D turning-bands covariance C1 (docs/math.md
// 2.1 and 2.4), so E cos(ρ u·h) averaged over directions u is ρ_s(|h|).
type radial struct {
	typ   geostat.StructureType
	kappa float64        // range scaling (generalised Cauchy, spheroidal)
	shape float64        // Gamma shape α/2 (generalised Cauchy)
	table *spectralTable // spheroidal
}

// newRadial prepares the sampler of a spectrally simulated structure type.
func newRadial(t geostat.StructureType, alpha int) (*radial, error) {
	switch t {
	case geostat.Gaussian, geostat.Exponential:
		return &radial{typ: t}, nil
	case geostat.GeneralisedCauchy:
		k, ok := geostat.CauchyScaling(alpha)
		if !ok {
			return nil, fmt.Errorf("alpha: %d must be 3, 5, 7 or 9 for a generalisedcauchy structure", alpha)
		}
		return &radial{typ: t, kappa: k, shape: float64(alpha) / 2}, nil
	case geostat.Spheroidal:
		_, _, _, k, ok := geostat.SpheroidalConstants(alpha)
		if !ok {
			return nil, fmt.Errorf("alpha: %d must be 3, 5, 7 or 9 for a spheroidal structure", alpha)
		}
		tab, err := spheroidalTable(alpha)
		if err != nil {
			return nil, err
		}
		return &radial{typ: t, kappa: k, table: tab}, nil
	}
	return nil, fmt.Errorf("tbsim: no spectral sampler for %s structures", t)
}

// sample draws ρ. The closed forms (docs/math.md 2.4):
//
//	gaussian exp(−3r²):                ρ = √6·χ₃
//	exponential exp(−3r):              ρ = 3·χ₃/|N₀|
//	generalised Cauchy (1+(κr)²)^(−α/2): ρ = κ·√(2Γ)·χ₃, Γ ~ Gamma(α/2, 1)
//	spheroidal:                        ρ = κ_α·w, w from the tabulated inverse CDF
func (s *radial) sample(rng *rand.Rand) float64 {
	switch s.typ {
	case geostat.Gaussian:
		return math.Sqrt(6) * chi3(rng)
	case geostat.Exponential:
		n := 0.0
		for n == 0 {
			n = math.Abs(rng.NormFloat64())
		}
		return 3 * chi3(rng) / n
	case geostat.GeneralisedCauchy:
		g := gammaVariate(rng, s.shape)
		return s.kappa * math.Sqrt(2*g) * chi3(rng)
	case geostat.Spheroidal:
		return s.kappa * s.table.quantile(rng.Float64())
	}
	panic(fmt.Sprintf("tbsim: no spectral sampler for %s", s.typ))
}

// spectralTable is a tabulated radial spectral distribution: the CDF F(w)
// on log-spaced nodes, sampled by inverse CDF with interpolation linear in
// (F, log w), a w³ law below the first node (the density vanishes like w²
// at the origin) and the analytic Pareto tail beyond the last node
// (docs/math.md 2.9).
type spectralTable struct {
	logW []float64 // node abscissae log w_j, increasing
	cdf  []float64 // F(w_j), strictly increasing
	wMin float64
	wMax float64
	tail float64 // 1 − F(wMax)
}

// quantile returns F⁻¹(u) for u in [0, 1).
func (t *spectralTable) quantile(u float64) float64 {
	n := len(t.cdf)
	switch {
	case u < t.cdf[0]:
		return t.wMin * math.Cbrt(u/t.cdf[0])
	case u >= t.cdf[n-1]:
		// Pareto tail of density ∝ w⁻² carrying the mass t.tail:
		// P(W > w) = t.tail·wMax/w.
		q := 1 - u
		if q <= 0 {
			q = math.SmallestNonzeroFloat64
		}
		return t.wMax * t.tail / q
	}
	j := sort.SearchFloat64s(t.cdf, u) // first index with cdf[j] ≥ u; j ≥ 1
	if t.cdf[j] == u {
		return math.Exp(t.logW[j])
	}
	f0, f1 := t.cdf[j-1], t.cdf[j]
	lw := t.logW[j-1] + (u-f0)/(f1-f0)*(t.logW[j]-t.logW[j-1])
	return math.Exp(lw)
}

var spheroidalTables struct {
	once [4]sync.Once
	tab  [4]*spectralTable
	err  [4]error
}

// spheroidalTable returns the (cached) radial spectral table of the
// spheroidal model with the given alpha, in units where κ_α = 1.
func spheroidalTable(alpha int) (*spectralTable, error) {
	i := (alpha - 3) / 2
	spheroidalTables.once[i].Do(func() {
		spheroidalTables.tab[i], spheroidalTables.err[i] = buildSpheroidalTable(alpha)
	})
	return spheroidalTables.tab[i], spheroidalTables.err[i]
}

// Table geometry of the spheroidal spectrum.
const (
	tableWMin    = 1e-3
	tableWMax    = 1e3
	tablePerDec  = 400
	tableMassTol = 1e-6
)

// buildSpheroidalTable tabulates the CDF of the radial spectral measure of
// S_α(s) (unit κ). With f(s) = (1+s²)^(−α/2), x* the inflexion point and c
// the tangent intercept (docs/math.md 1.3), S = f/c + g where
// g(s) = 1 − λs − f(s)/c on [0, x*] and 0 beyond is compactly supported.
// Hence
//
//	F(w) = F_f(w)/c + (2/π) ∫₀^{x*} g1(s) sin(ws)/s ds,   g1 = d/ds[s·g(s)],
//
// where F_f(w) = E[F_χ3(w/√(2Γ))], Γ ~ Gamma(α/2), is the spectral CDF of the
// inverse multiquadric (a Gaussian scale mixture) and the second term is a
// short, non-singular oscillatory integral done by Gauss–Legendre panels that
// resolve the oscillation. F(∞) = 1/c + g1(0) = 1 exactly; the self-test
// checks that F(wMax) plus the analytic tail mass 4λ/(π·wMax) is 1 within
// 1e-6 and that F is non-decreasing (a non-negative density).
func buildSpheroidalTable(alpha int) (*spectralTable, error) {
	xStar, c, lambda, _, ok := geostat.SpheroidalConstants(alpha)
	if !ok {
		return nil, fmt.Errorf("alpha: %d must be 3, 5, 7 or 9 for a spheroidal structure", alpha)
	}
	a := float64(alpha)
	f1 := func(s float64) float64 { // d/ds[s·f(s)] = (1 − (α−1)s²)(1+s²)^(−α/2−1)
		u := 1 + s*s
		p := math.Sqrt(u)
		for k := 0; k < (alpha+1)/2; k++ {
			p *= u
		}
		return (1 - (a-1)*s*s) / p
	}
	g1 := func(s float64) float64 { return 1 - 2*lambda*s - f1(s)/c }
	lg := lgammaOf(a / 2)
	fF := func(w float64) float64 { // E[F_χ3(w/√(2Γ))] over Γ ~ Gamma(α/2, 1), γ = e^u
		if w > 60 {
			return 1 // 1 − F_f(w) decays like e^(−w): below 1e-20 here
		}
		return gaussLegendre(-45, 6, 68, func(u float64) float64 {
			gm := math.Exp(u)
			dens := math.Exp(a/2*u - gm - lg)
			return chi3CDF(w/math.Sqrt(2*gm)) * dens
		})
	}
	gG := func(w float64) float64 {
		panels := 4 + int(math.Ceil(2*w*xStar/math.Pi))
		return 2 / math.Pi * gaussLegendre(0, xStar, panels, func(s float64) float64 {
			return g1(s) * math.Sin(w*s) / s
		})
	}
	decades := math.Log10(tableWMax / tableWMin)
	n := int(math.Round(decades*tablePerDec)) + 1
	t := &spectralTable{logW: make([]float64, n), cdf: make([]float64, n), wMin: tableWMin, wMax: tableWMax}
	l0, l1 := math.Log(tableWMin), math.Log(tableWMax)
	for j := 0; j < n; j++ {
		lw := l0 + (l1-l0)*float64(j)/float64(n-1)
		w := math.Exp(lw)
		t.logW[j] = lw
		t.cdf[j] = fF(w)/c + gG(w)
	}
	for j := 1; j < n; j++ {
		if t.cdf[j] <= t.cdf[j-1] {
			return nil, fmt.Errorf("tbsim: spheroidal(%d) spectral CDF not increasing at w = %g (%g ≤ %g): negative density or quadrature failure",
				alpha, math.Exp(t.logW[j]), t.cdf[j], t.cdf[j-1])
		}
	}
	if t.cdf[0] <= 0 {
		return nil, fmt.Errorf("tbsim: spheroidal(%d) spectral CDF %g ≤ 0 at w = %g", alpha, t.cdf[0], tableWMin)
	}
	tail := 4 * lambda / (math.Pi * tableWMax)
	if mass := t.cdf[n-1] + tail; math.Abs(mass-1) > tableMassTol {
		return nil, fmt.Errorf("tbsim: spheroidal(%d) spectral mass %.9f differs from 1 by more than %g", alpha, mass, tableMassTol)
	}
	t.tail = 1 - t.cdf[n-1]
	return t, nil
}

// chi3CDF is the CDF of the χ distribution with 3 degrees of freedom,
// erf(x/√2) − √(2/π)·x·exp(−x²/2).
func chi3CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return math.Erf(x/math.Sqrt2) - math.Sqrt(2/math.Pi)*x*math.Exp(-x*x/2)
}

func lgammaOf(x float64) float64 {
	l, _ := math.Lgamma(x)
	return l
}

// Nodes and weights of the 8-point Gauss–Legendre rule on [−1, 1].
var (
	gl8x = [8]float64{-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
		0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363}
	gl8w = [8]float64{0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
		0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763}
)

// gaussLegendre integrates f over [a, b] with the 8-point Gauss–Legendre
// rule on n equal panels.
func gaussLegendre(a, b float64, n int, f func(float64) float64) float64 {
	h := (b - a) / float64(n)
	sum := 0.0
	for p := 0; p < n; p++ {
		mid := a + (float64(p)+0.5)*h
		s := 0.0
		for q := 0; q < 8; q++ {
			s += gl8w[q] * f(mid+0.5*h*gl8x[q])
		}
		sum += s
	}
	return sum * h / 2
}
