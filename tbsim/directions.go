package tbsim

import (
	"math"
	"math/rand/v2"

	"github.com/geostat-engine/geostat/geostat"
)

// fibonacciDirections returns n unit vectors of the spherical Fibonacci
// lattice on the upper half-sphere (docs/math.md 2.2), flat xyz:
//
//	z_i = (i + ½)/n,  φ_i = i·π(3 − √5),  u_i = (√(1−z_i²) cos φ_i, √(1−z_i²) sin φ_i, z_i)
//
// A half-sphere suffices because every line covariance is even.
func fibonacciDirections(n int) []float64 {
	out := make([]float64, 3*n)
	ga := math.Pi * (3 - math.Sqrt(5))
	for i := 0; i < n; i++ {
		z := (float64(i) + 0.5) / float64(n)
		rxy := math.Sqrt(1 - z*z)
		s, c := math.Sincos(float64(i) * ga)
		out[3*i], out[3*i+1], out[3*i+2] = rxy*c, rxy*s, z
	}
	return out
}

// haarRotation returns a uniformly distributed (Haar) random rotation: the
// matrix of the unit quaternion obtained by normalising four independent
// standard normal values.
func haarRotation(rng *rand.Rand) geostat.Matrix3 {
	var w, x, y, z, n float64
	for n < 1e-12 {
		w, x, y, z = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		n = math.Sqrt(w*w + x*x + y*y + z*z)
	}
	w, x, y, z = w/n, x/n, y/n, z/n
	return geostat.Matrix3{
		1 - 2*(y*y+z*z), 2 * (x*y - w*z), 2 * (x*z + w*y),
		2 * (x*y + w*z), 1 - 2*(x*x+z*z), 2 * (y*z - w*x),
		2 * (x*z - w*y), 2 * (y*z + w*x), 1 - 2*(x*x+y*y),
	}
}
