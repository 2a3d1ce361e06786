package report

import (
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// BlockAverager averages a variogram model over pairs of block
// discretisation points: γ̄(V, V_h) = (1/n²) Σ_k Σ_l γ(x_l + h − x_k) for the
// n sub-points x_k of a cell V of a grid and the same points shifted by h.
// The n² point pairs reduce to the (2n_x − 1)(2n_y − 1)(2n_z − 1) distinct
// offsets, each weighted by its multiplicity.
type BlockAverager struct {
	v    *geostat.Variogram
	diff []float64 // world offsets x_l − x_k, flat xyz
	mult []float64 // multiplicity / n²
}

// NewBlockAverager prepares the averages of variogram v over the sub-points
// of discretisation disc (see grid.BlockDiscretisation) of the cells of g.
func NewBlockAverager(v *geostat.Variogram, g *grid.Grid, disc grid.BlockDiscretisation) *BlockAverager {
	n := [3]int{disc.NX, disc.NY, disc.NZ}
	var step [3][3]float64
	for a := range 3 {
		s := g.Step(a)
		for c := range 3 {
			step[a][c] = s[c] / float64(n[a])
		}
	}
	nn := float64(disc.Count())
	b := &BlockAverager{v: v}
	for dc := -(n[2] - 1); dc < n[2]; dc++ {
		for db := -(n[1] - 1); db < n[1]; db++ {
			for da := -(n[0] - 1); da < n[0]; da++ {
				m := float64((n[0] - abs(da)) * (n[1] - abs(db)) * (n[2] - abs(dc)))
				for c := range 3 {
					b.diff = append(b.diff, float64(da)*step[0][c]+float64(db)*step[1][c]+float64(dc)*step[2][c])
				}
				b.mult = append(b.mult, m/(nn*nn))
			}
		}
	}
	return b
}

// GammaBar returns γ̄(V, V_h) for the world lag h (γ̄(V, V) for h = 0).
func (b *BlockAverager) GammaBar(h [3]float64) float64 {
	s := 0.0
	for i, m := range b.mult {
		d := b.diff[3*i : 3*i+3]
		s += m * b.v.GammaLag(d[0]+h[0], d[1]+h[1], d[2]+h[2])
	}
	return s
}

// Regularised returns the block-support variogram γ_V(h) = γ̄(V, V_h) −
// γ̄(V, V), equal to C̄(V, V) − C̄(V, V_h) for a stationary model (docs/math.md
// section 7.3); it is also defined for intrinsic models.
func (b *BlockAverager) Regularised(h [3]float64) float64 {
	return b.GammaBar(h) - b.GammaBar([3]float64{})
}

// BlockCovariance returns C̄(V, V) = C(0) − γ̄(V, V), the prior variance of a
// block average, which includes c0/n from a point-support nugget. It is NaN
// for an intrinsic model (no covariance).
func (b *BlockAverager) BlockCovariance() float64 {
	if b.v.Intrinsic() {
		return math.NaN()
	}
	return b.v.TotalSill() - b.GammaBar([3]float64{})
}

// IntegralRange returns A = ∫ C(h) dh over all lags of the model's
// structures, Σ_s c_s·K_s·a_s·b_s·d_s with a_s, b_s, d_s the structure's three
// ranges and K_s the integral of its unit-range correlation over space:
// π/6 (spherical), 8π/27 (exponential, practical range), π^(3/2)/3^(3/2)
// (gaussian, practical range), 7π/60 (cubic), and for the spheroidal and
// generalised Cauchy models with α ≥ 5 the closed forms through the beta
// function. The nugget has no integral range. ok is false when a structure
// has none: linear (intrinsic), and α = 3 whose correlation decays as r⁻³.
func IntegralRange(v *geostat.Variogram) (a float64, ok bool) {
	for i := range v.Structures {
		s := &v.Structures[i]
		k, ok := unitIntegralRange(s.Type, s.Alpha)
		if !ok {
			return math.NaN(), false
		}
		e := s.Ellipsoid
		a += s.Contribution * k * e.Major * e.SemiMajor * e.Minor
	}
	return a, true
}

// unitIntegralRange returns 4π ∫₀^∞ r² ρ(r) dr for a unit-range structure.
func unitIntegralRange(t geostat.StructureType, alpha int) (float64, bool) {
	switch t {
	case geostat.Spherical:
		return math.Pi / 6, true
	case geostat.Exponential:
		return 8 * math.Pi / 27, true
	case geostat.Gaussian:
		return math.Pow(math.Pi, 1.5) / math.Pow(3, 1.5), true
	case geostat.Cubic:
		return 7 * math.Pi / 60, true
	case geostat.GeneralisedCauchy:
		if alpha < 5 {
			return 0, false
		}
		kappa, ok := geostat.CauchyScaling(alpha)
		if !ok {
			return 0, false
		}
		return 4 * math.Pi / (kappa * kappa * kappa) * halfBeta(alpha), true
	case geostat.Spheroidal:
		if alpha < 5 {
			return 0, false
		}
		xs, c, lambda, kappa, ok := geostat.SpheroidalConstants(alpha)
		if !ok {
			return 0, false
		}
		// ∫₀^∞ s² S(s) ds: the linear piece up to x*, then (1 + s²)^(−α/2)/c.
		lin := xs*xs*xs/3 - lambda*xs*xs*xs*xs/4
		head := simpson(func(s float64) float64 {
			return s * s * math.Pow(1+s*s, -float64(alpha)/2)
		}, 0, xs, 512)
		return 4 * math.Pi / (kappa * kappa * kappa) * (lin + (halfBeta(alpha)-head)/c), true
	}
	return 0, false
}

// halfBeta returns ∫₀^∞ s² (1 + s²)^(−α/2) ds = B(3/2, (α − 3)/2)/2.
func halfBeta(alpha int) float64 {
	a, b := 1.5, float64(alpha-3)/2
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return math.Exp(la+lb-lab) / 2
}

// simpson integrates f over [a, b] by the composite Simpson rule with n (even)
// intervals.
func simpson(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(a+float64(i)*h)
	}
	return s * h / 3
}
