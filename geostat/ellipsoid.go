package geostat

import (
	"fmt"
	"math"
)

// Ellipsoid is an anisotropy or search ellipsoid: three ranges along the
// local axes (major = local x, semi-major = local y, minor = local z) and a
// rotation. The ordering major ≥ semi-major ≥ minor is not required.
type Ellipsoid struct {
	Major     float64  `json:"major"`
	SemiMajor float64  `json:"semi_major"`
	Minor     float64  `json:"minor"`
	Rotation  Rotation `json:"rotation"`
}

// Validate checks that the three ranges are positive and finite and that the
// rotation is valid (rotation 1.1.0 ranges).
func (e Ellipsoid) Validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"major", e.Major}, {"semi_major", e.SemiMajor}, {"minor", e.Minor}} {
		if math.IsNaN(r.v) || math.IsInf(r.v, 0) || r.v <= 0 {
			return fmt.Errorf("ellipsoid_ranges.%s: %v must be a positive finite number", r.name, r.v)
		}
	}
	return e.Rotation.Validate()
}

// MaxRange returns the largest of the three ranges.
func (e Ellipsoid) MaxRange() float64 { return math.Max(e.Major, math.Max(e.SemiMajor, e.Minor)) }

// Anisotropy returns the transform into the ellipsoid's isotropic space,
// A = diag(1/major, 1/semi_major, 1/minor) · Rᵀ. It returns an error when the
// ellipsoid is invalid.
func (e Ellipsoid) Anisotropy() (Anisotropy, error) {
	if err := e.Validate(); err != nil {
		return Anisotropy{}, err
	}
	rt := e.Rotation.WorldToLocal()
	inv := [3]float64{1 / e.Major, 1 / e.SemiMajor, 1 / e.Minor}
	var a Anisotropy
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			a.M[3*i+j] = inv[i] * rt[3*i+j]
		}
	}
	return a, nil
}

// Distance returns the anisotropic (reduced) distance between points a and b,
// |D⁻¹ Rᵀ (b − a)|. It returns an error when the ellipsoid is invalid.
func (e Ellipsoid) Distance(a, b [3]float64) (float64, error) {
	an, err := e.Anisotropy()
	if err != nil {
		return 0, err
	}
	return an.Distance(a, b), nil
}

// Anisotropy is the linear map A = D⁻¹ Rᵀ from world coordinates into the
// isotropic space of an ellipsoid, where the ellipsoid is the unit ball.
type Anisotropy struct {
	// M is the row-major matrix A.
	M Matrix3
}

// Apply maps the world vector (x, y, z) into isotropic space.
func (a *Anisotropy) Apply(x, y, z float64) (float64, float64, float64) {
	return a.M.Apply(x, y, z)
}

// Norm returns the reduced length |A h| of the lag h = (dx, dy, dz).
func (a *Anisotropy) Norm(dx, dy, dz float64) float64 {
	u, v, w := a.M.Apply(dx, dy, dz)
	return math.Sqrt(u*u + v*v + w*w)
}

// Distance returns the reduced distance between points p and q.
func (a *Anisotropy) Distance(p, q [3]float64) float64 {
	return a.Norm(q[0]-p[0], q[1]-p[1], q[2]-p[2])
}

// Transform maps flat world coordinates src (x0, y0, z0, x1, ...) into
// isotropic space, writing into dst (grown if too short) and returning it.
// dst and src may be the same slice. It panics if len(src) is not a multiple
// of 3.
func (a *Anisotropy) Transform(dst, src []float64) []float64 {
	if len(src)%3 != 0 {
		panic("geostat: coordinate slice length is not a multiple of 3")
	}
	if cap(dst) < len(src) {
		dst = make([]float64, len(src))
	}
	dst = dst[:len(src)]
	m := &a.M
	for i := 0; i < len(src); i += 3 {
		x, y, z := src[i], src[i+1], src[i+2]
		dst[i] = m[0]*x + m[1]*y + m[2]*z
		dst[i+1] = m[3]*x + m[4]*y + m[5]*z
		dst[i+2] = m[6]*x + m[7]*y + m[8]*z
	}
	return dst
}
