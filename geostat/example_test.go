package geostat_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
)

// A rotation maps the ellipsoid's local axes into the world: with a dip
// azimuth of 90° the major axis points South.
func ExampleRotation() {
	r := geostat.Rotation{DipAzimuth: 90, Dip: 0, Pitch: 0}
	m := r.Matrix()
	x, y, z := m.Apply(1, 0, 0) // the major axis
	fmt.Printf("major axis: (%.0f, %.0f, %.0f)\n", x, y, z)

	e := geostat.Ellipsoid{Major: 100, SemiMajor: 50, Minor: 10, Rotation: r}
	h, _ := e.Distance([3]float64{0, 0, 0}, [3]float64{0, -50, 0})
	fmt.Printf("reduced distance 50 m south: %.2f\n", h)
	// Output:
	// major axis: (0, -1, 0)
	// reduced distance 50 m south: 0.50
}

// A two-structure variogram: covariance and variogram of two points.
func ExampleVariogram_Covariance() {
	v, err := geostat.NewVariogram(0.1,
		geostat.Structure{Type: geostat.Spherical, Contribution: 0.6,
			Ellipsoid: geostat.Ellipsoid{Major: 100, SemiMajor: 100, Minor: 20}},
		geostat.Structure{Type: geostat.Exponential, Contribution: 0.3,
			Ellipsoid: geostat.Ellipsoid{Major: 300, SemiMajor: 300, Minor: 60}},
	)
	if err != nil {
		panic(err)
	}
	a, b := [3]float64{0, 0, 0}, [3]float64{50, 0, 0}
	fmt.Printf("sill %.2f\n", v.TotalSill())
	fmt.Printf("C(a,a) %.4f\n", v.Covariance(a, a))
	fmt.Printf("C(a,b) %.4f\n", v.Covariance(a, b))
	fmt.Printf("γ(a,b) %.4f\n", v.Gamma(a, b))
	// Output:
	// sill 1.00
	// C(a,a) 1.0000
	// C(a,b) 0.3695
	// γ(a,b) 0.6305
}

// A distribution table with power tails: the normal score of a value and
// back.
func ExampleDistribution() {
	d, err := geostat.NewDistribution(
		[]float64{1, 2, 4}, []float64{0.2, 0.5, 0.8},
		geostat.Tail{Bound: 0, Power: 2},    // lower power model, min 0
		geostat.Tail{Bound: 10, Power: 0.5}, // upper power model, max 10
	)
	if err != nil {
		panic(err)
	}
	y := d.NormalScore(2)
	fmt.Printf("F(2) = %.2f, y = %.4f\n", d.CDF(2), y)
	fmt.Printf("back: %.4f\n", d.BackTransform(y))
	fmt.Printf("F⁻¹(0.9) = %.2f\n", d.Quantile(0.9))
	// Output:
	// F(2) = 0.50, y = 0.0000
	// back: 2.0000
	// F⁻¹(0.9) = 5.50
}
