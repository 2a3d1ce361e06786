package tbsim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Oracle 5 (docs/math.md 8.1): unit half-sphere directions and the
// quadrature error of the Fibonacci set for the spherical model,
// max |(1/L) Σ C1(u_l·h) − C3(|h|)| over 300 random directions and 5 lags,
// below 0.002 at L = 500.
func TestFibonacciDirections(t *testing.T) {
	const L = 500
	dirs := fibonacciDirections(L)
	for l := 0; l < L; l++ {
		x, y, z := dirs[3*l], dirs[3*l+1], dirs[3*l+2]
		require.InDelta(t, 1, x*x+y*y+z*z, 1e-12)
		require.GreaterOrEqual(t, z, 0.0)
	}
	c1 := func(t float64) float64 {
		t = math.Abs(t)
		if t >= 1 {
			return 0
		}
		return 1 - 3*t + 2*t*t*t
	}
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for d := 0; d < 300; d++ {
		hx, hy, hz := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		n := math.Sqrt(hx*hx + hy*hy + hz*hz)
		hx, hy, hz = hx/n, hy/n, hz/n
		for _, r := range []float64{0.1, 0.3, 0.5, 0.7, 1} {
			s := 0.0
			for l := 0; l < L; l++ {
				s += c1(r * (hx*dirs[3*l] + hy*dirs[3*l+1] + hz*dirs[3*l+2]))
			}
			worst = math.Max(worst, math.Abs(s/L-geostat.Correlation(geostat.Spherical, 0, r)))
		}
	}
	assert.Less(t, worst, 0.002)
}

// The Haar rotation is orthonormal with determinant +1.
func TestHaarRotation(t *testing.T) {
	rng := newRand(key(7, purposeRotation))
	for i := 0; i < 100; i++ {
		q := haarRotation(rng)
		qt := q.Transpose()
		p := q.Mul(&qt)
		for a := 0; a < 9; a++ {
			want := 0.0
			if a%4 == 0 {
				want = 1
			}
			require.InDelta(t, want, p[a], 1e-12)
		}
		det := q[0]*(q[4]*q[8]-q[5]*q[7]) - q[1]*(q[3]*q[8]-q[5]*q[6]) + q[2]*(q[3]*q[7]-q[4]*q[6])
		require.InDelta(t, 1, det, 1e-12)
	}
}

// The Marsaglia–Tsang sampler has the Gamma mean k and variance k.
func TestGammaVariate(t *testing.T) {
	rng := newRand(key(11, 1))
	const N = 200000
	for _, k := range []float64{0.5, 1.5, 2.5, 4.5} {
		s, s2 := 0.0, 0.0
		for i := 0; i < N; i++ {
			g := gammaVariate(rng, k)
			s += g
			s2 += g * g
		}
		m := s / N
		v := s2/N - m*m
		// 4σ: Var(mean) = k/N, Var(sample variance) ≈ (μ4 − σ⁴)/N with μ4 = 3k² + 6k.
		assert.InDelta(t, k, m, 4*math.Sqrt(k/N), "mean, shape %g", k)
		assert.InDelta(t, k, v, 4*math.Sqrt((3*k*k+6*k-k*k)/N), "variance, shape %g", k)
	}
}

// Oracle 13 (docs/math.md 8.2): for every spectrally simulated type the
// mean of cos(ω·h) over N = 10⁶ draws (ω = ρ·u, u uniform on the sphere)
// equals ρ(|h|) within 4√(0.5/N) = 0.0028.
func TestSpectralSamplers(t *testing.T) {
	const N = 1000000
	tol := 4 * math.Sqrt(0.5/N)
	type tc struct {
		typ   geostat.StructureType
		alpha int
	}
	cases := []tc{{geostat.Gaussian, 0}, {geostat.Exponential, 0}}
	for _, a := range []int{3, 5, 7, 9} {
		cases = append(cases, tc{geostat.GeneralisedCauchy, a}, tc{geostat.Spheroidal, a})
	}
	lags := []float64{0.25, 0.5, 1}
	for _, c := range cases {
		rad, err := newRadial(c.typ, c.alpha)
		require.NoError(t, err)
		rng := newRand(key(99, uint64(c.typ), uint64(c.alpha)))
		sums := make([]float64, len(lags))
		for i := 0; i < N; i++ {
			rho := rad.sample(rng)
			z := 2*rng.Float64() - 1 // u·ĥ for u uniform on the sphere
			for j, r := range lags {
				sums[j] += math.Cos(rho * r * z)
			}
		}
		for j, r := range lags {
			assert.InDelta(t, geostat.Correlation(c.typ, c.alpha, r), sums[j]/N, tol, "%v alpha %d r %g", c.typ, c.alpha, r)
		}
	}
}

// The tabulated spheroidal spectrum passes its self-test (built without
// error: mass 1 within 1e-6, non-decreasing CDF) and its quantile function
// inverts the table.
func TestSpheroidalTable(t *testing.T) {
	for _, a := range []int{3, 5, 7, 9} {
		tab, err := spheroidalTable(a)
		require.NoError(t, err)
		_, _, lambda, _, _ := geostat.SpheroidalConstants(a)
		assert.InDelta(t, 4*lambda/(math.Pi*tableWMax), tab.tail, 1e-6)
		for j := 1; j < len(tab.cdf); j += 97 {
			assert.InDelta(t, math.Exp(tab.logW[j]), tab.quantile(tab.cdf[j]), 1e-9*math.Exp(tab.logW[j]))
		}
		assert.Less(t, tab.quantile(0.5*tab.cdf[0]), tableWMin)
		assert.Greater(t, tab.quantile(1-0.5*tab.tail), tableWMax)
	}
}

// Oracles 6 and 14 (docs/math.md 8.1, 8.2): a single partition line with a
// random offset and random signs has covariance amp²·(1/12)(1 − 3τ + 2τ³)
// (spherical) and amp²·(1/840)(1 − 21τ² + 35τ³ − 21τ⁵ + 6τ⁷) (cubic), checked by
// Monte Carlo over 10⁶ offsets and sign keys with a 4σ bound from the
// sample variance of the products.
func TestPartitionLineCovariance(t *testing.T) {
	const N = 1000000
	exact := map[process]func(float64) float64{
		processPartitionSpherical: func(x float64) float64 { return (1 - 3*x + 2*x*x*x) / 12 },
		processPartitionCubic: func(x float64) float64 {
			x2 := x * x
			return (1 - 21*x2 + 35*x2*x - 21*x2*x2*x + 6*x2*x2*x2*x) / 840
		},
	}
	rng := newRand(key(5, 5))
	for proc, cov := range exact {
		ls := &lineSet{proc: proc, amp: 1, vx: []float64{1}, vy: []float64{0}, vz: []float64{0}, off: []float64{0}, keys: []uint64{0}}
		for _, tau := range []float64{0, 0.25, 0.5, 0.75, 1.2} {
			s, s2 := 0.0, 0.0
			for i := 0; i < N; i++ {
				ls.off[0] = rng.Float64()
				ls.keys[0] = rng.Uint64()
				x0 := 100 * (rng.Float64() - 0.5)
				p := ls.pointValue(x0, 0, 0) * ls.pointValue(x0+tau, 0, 0)
				s += p
				s2 += p * p
			}
			m := s / N
			sd := math.Sqrt((s2/N - m*m) / N)
			want := 0.0
			if tau < 1 {
				want = cov(tau)
			}
			assert.InDelta(t, want, m, 4*sd+1e-12, "process %d tau %g", proc, tau)
		}
	}
}
