package geostat

import (
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/internal/fastexp"
)

// StructureType is the type of a variogram structure, as named by the
// `variogram_type` member of the variogram object.
type StructureType int

// The seven structure types of the variogram object.
const (
	Spherical StructureType = iota + 1
	Exponential
	Gaussian
	Cubic
	Spheroidal
	GeneralisedCauchy
	Linear
)

var structureNames = [...]string{
	Spherical:         "spherical",
	Exponential:       "exponential",
	Gaussian:          "gaussian",
	Cubic:             "cubic",
	Spheroidal:        "spheroidal",
	GeneralisedCauchy: "generalisedcauchy",
	Linear:            "linear",
}

// String returns the schema name of the type ("spherical", …,
// "generalisedcauchy", "linear").
func (t StructureType) String() string {
	if t >= Spherical && t <= Linear {
		return structureNames[t]
	}
	return fmt.Sprintf("StructureType(%d)", int(t))
}

// ParseStructureType returns the type named by a `variogram_type` string.
func ParseStructureType(name string) (StructureType, error) {
	for t := Spherical; t <= Linear; t++ {
		if structureNames[t] == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown variogram_type %q (want one of spherical, exponential, gaussian, cubic, spheroidal, generalisedcauchy, linear)", name)
}

// HasAlpha reports whether the type takes a shape factor alpha (spheroidal
// and generalised Cauchy).
func (t StructureType) HasAlpha() bool { return t == Spheroidal || t == GeneralisedCauchy }

// shape holds the constants of the spheroidal and generalised Cauchy families
// for one alpha. See docs/math.md section 1.3.
type shape struct {
	xStar  float64 // inflexion point 1/√(α+1)
	c      float64 // tangent intercept c_α
	lambda float64 // linear slope λ_α of the spheroidal near the origin
	kappa  float64 // spheroidal range scaling κ_α
	kappaC float64 // generalised Cauchy 95 % practical-range scaling κ^C_α
}

// shapes is indexed by (alpha-3)/2 for alpha in {3, 5, 7, 9}; it is computed
// once from the closed forms and never modified.
var shapes = func() [4]shape {
	var out [4]shape
	c9 := spheroidalIntercept(9)
	q := math.Pow(2, -4.5) / c9 // value of every spheroidal at its range
	for i, a := range []float64{3, 5, 7, 9} {
		c := spheroidalIntercept(a)
		out[i] = shape{
			xStar:  1 / math.Sqrt(a+1),
			c:      c,
			lambda: a / (2 * math.Sqrt(a+1)),
			kappa:  math.Sqrt(math.Pow(q*c, -2/a) - 1),
			kappaC: math.Sqrt(math.Pow(20, 2/a) - 1),
		}
	}
	return out
}()

// spheroidalIntercept is c_α = f_α(x*)·(2α+2)/(α+2) with
// f_α(x*) = ((α+2)/(α+1))^(−α/2).
func spheroidalIntercept(a float64) float64 {
	return math.Pow((a+2)/(a+1), -a/2) * (2*a + 2) / (a + 2)
}

// validAlpha reports whether alpha is one of 3, 5, 7, 9.
func validAlpha(alpha int) bool { return alpha == 3 || alpha == 5 || alpha == 7 || alpha == 9 }

// invMultiquadric returns (1 + s²)^(−α/2) for an odd integer α without
// calling math.Pow.
func invMultiquadric(s2 float64, alpha int) float64 {
	u := 1 + s2
	p := 1.0
	for k := 0; k < (alpha-1)/2; k++ {
		p *= u
	}
	return 1 / (p * math.Sqrt(u))
}

// SpheroidalConstants returns the constants of the spheroidal model with the
// given alpha: the inflexion point x*, the tangent intercept c, the linear
// slope λ and the range scaling κ (docs/math.md section 1.3). ok is false
// when alpha is not 3, 5, 7 or 9.
func SpheroidalConstants(alpha int) (xStar, c, lambda, kappa float64, ok bool) {
	if !validAlpha(alpha) {
		return 0, 0, 0, 0, false
	}
	s := shapes[(alpha-3)/2]
	return s.xStar, s.c, s.lambda, s.kappa, true
}

// CauchyScaling returns κ^C = √(20^(2/α) − 1), the scaling that puts the
// generalised Cauchy model at 95 % of its sill at the entered range
// (docs/math.md section 1.4, option C). ok is false for an invalid alpha.
func CauchyScaling(alpha int) (kappa float64, ok bool) {
	if !validAlpha(alpha) {
		return 0, false
	}
	return shapes[(alpha-3)/2].kappaC, true
}

// Correlation returns the unit-sill correlation ρ(r) of a structure type at
// reduced distance r ≥ 0 (r = 1 at the range). For Linear, which has no
// correlation, it returns −r, the generalised covariance of the intrinsic
// model γ = r. alpha is used by Spheroidal and GeneralisedCauchy only and
// must then be 3, 5, 7 or 9 (otherwise Correlation panics).
func Correlation(t StructureType, alpha int, r float64) float64 {
	switch t {
	case Spherical:
		if r >= 1 {
			return 0
		}
		return 1 - r*(1.5-0.5*r*r)
	case Exponential:
		return fastexp.Exp(-3 * r)
	case Gaussian:
		return fastexp.Exp(-3 * r * r)
	case Cubic:
		if r >= 1 {
			return 0
		}
		r2 := r * r
		return 1 - r2*(7-r*(8.75-r2*(3.5-0.75*r2)))
	case Spheroidal:
		if !validAlpha(alpha) {
			panic(fmt.Sprintf("geostat: spheroidal alpha %d not in {3,5,7,9}", alpha))
		}
		sh := &shapes[(alpha-3)/2]
		s := sh.kappa * r
		if s <= sh.xStar {
			return 1 - sh.lambda*s
		}
		return invMultiquadric(s*s, alpha) / sh.c
	case GeneralisedCauchy:
		if !validAlpha(alpha) {
			panic(fmt.Sprintf("geostat: generalised cauchy alpha %d not in {3,5,7,9}", alpha))
		}
		s := shapes[(alpha-3)/2].kappaC * r
		return invMultiquadric(s*s, alpha)
	case Linear:
		return -r
	}
	panic(fmt.Sprintf("geostat: unknown structure type %d", int(t)))
}

// Structure is one nested structure of a variogram: a type, a contribution
// (its partial sill; for Linear the variogram value at the range), a shape
// factor alpha for the spheroidal and generalised Cauchy types, and an
// anisotropy ellipsoid whose ranges are the structure's ranges.
//
// A Structure is prepared by NewVariogram, which precomputes its anisotropy
// transform; use the copies held by the Variogram.
type Structure struct {
	Type         StructureType
	Contribution float64
	Alpha        int
	Ellipsoid    Ellipsoid

	aniso Anisotropy
}

// validate checks the structure's fields; i is its position for messages.
func (s *Structure) validate(i int) error {
	if s.Type < Spherical || s.Type > Linear {
		return fmt.Errorf("structures[%d].variogram_type: unknown type %d", i, int(s.Type))
	}
	if math.IsNaN(s.Contribution) || math.IsInf(s.Contribution, 0) || s.Contribution <= 0 {
		return fmt.Errorf("structures[%d].contribution: %v must be a positive finite number", i, s.Contribution)
	}
	if s.Type.HasAlpha() {
		if !validAlpha(s.Alpha) {
			return fmt.Errorf("structures[%d].alpha: %d must be 3, 5, 7 or 9 for a %s structure", i, s.Alpha, s.Type)
		}
	} else if s.Alpha != 0 {
		return fmt.Errorf("structures[%d].alpha: a %s structure takes no alpha", i, s.Type)
	}
	a, err := s.Ellipsoid.Anisotropy()
	if err != nil {
		return fmt.Errorf("structures[%d].anisotropy: %w", i, err)
	}
	s.aniso = a
	return nil
}

// Anisotropy returns the structure's transform into its isotropic space
// (reduced distance 1 at the range).
func (s *Structure) Anisotropy() *Anisotropy { return &s.aniso }

// Rho returns the structure's unit-sill correlation at reduced distance r
// (see Correlation).
func (s *Structure) Rho(r float64) float64 { return Correlation(s.Type, s.Alpha, r) }

// Reduced returns the structure's reduced distance |A h| of the lag
// h = (dx, dy, dz).
func (s *Structure) Reduced(dx, dy, dz float64) float64 { return s.aniso.Norm(dx, dy, dz) }
