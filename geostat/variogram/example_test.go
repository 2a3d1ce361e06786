package variogram_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/variogram"
)

// Experimental semivariograms of samples along two perpendicular lines:
// omnidirectional, east–west and north–south.
func ExampleCompute() {
	var coords, values []float64
	for i := 0; i < 20; i++ {
		x := float64(i) * 10
		coords = append(coords, x, 0, 0) // east–west line: a smooth trend
		values = append(values, math.Sin(x/40))
		coords = append(coords, 1000, x, 0) // north–south line, far east: alternating
		values = append(values, float64(i%2))
	}
	e, err := variogram.Compute(context.Background(), coords, values, nil, variogram.Params{
		Directions: []variogram.Direction{
			{Type: variogram.Omnidirectional},
			{Azimuth: 90, AzimuthTolerance: 22.5, DipTolerance: 22.5, Bandwidth: 5, BandHeight: 5},
			{Azimuth: 0, AzimuthTolerance: 22.5, DipTolerance: 22.5, Bandwidth: 5, BandHeight: 5},
		},
		LagDistance: 10, NLags: 3,
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("data variance %.4f\n", e.DataVariance)
	for _, d := range e.Directions {
		fmt.Printf("%s azimuth %g:\n", d.Type, d.Azimuth)
		for _, l := range e.DirectionLags(d.Offset / d.Count)[1:] {
			fmt.Printf("  [%g, %g] centroid %.1f pairs %d γ %.4f\n", l.Start, l.End, l.Centroid, l.Pairs, l.Value)
		}
	}
	// Output:
	// data variance 0.3908
	// omnidirectional azimuth 0:
	//   [5, 15] centroid 10.0 pairs 38 γ 0.2577
	//   [15, 25] centroid 20.0 pairs 36 γ 0.0304
	//   [25, 35] centroid 30.0 pairs 34 γ 0.3165
	// directional azimuth 90:
	//   [5, 15] centroid 10.0 pairs 19 γ 0.0154
	//   [15, 25] centroid 20.0 pairs 18 γ 0.0607
	//   [25, 35] centroid 30.0 pairs 17 γ 0.1331
	// directional azimuth 0:
	//   [5, 15] centroid 10.0 pairs 19 γ 0.5000
	//   [15, 25] centroid 20.0 pairs 18 γ 0.0000
	//   [25, 35] centroid 30.0 pairs 17 γ 0.5000
}

// Fitting a nugget and a spherical structure to an omnidirectional
// experimental variogram (here points of a known model, so the fit
// recovers it).
func ExampleFit() {
	truth, _ := geostat.NewVariogram(0.2, geostat.Structure{Type: geostat.Spherical, Contribution: 0.8,
		Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 60, Minor: 60}})
	s := variogram.Series{Direction: variogram.Direction{Type: variogram.Omnidirectional}}
	for k := 1; k <= 10; k++ {
		h := 10 * float64(k)
		s.Lags = append(s.Lags, variogram.Lag{Start: h - 5, End: h + 5, Centroid: h,
			Value: truth.GammaLag(h, 0, 0), Pairs: 100, Weight: 100})
	}
	res, err := variogram.Fit(context.Background(), []variogram.Series{s}, variogram.FitParams{
		Structures: []variogram.StructureSpec{{Type: geostat.Spherical}},
		Sill:       variogram.SillUnit,
	})
	if err != nil {
		panic(err)
	}
	v := res.Variogram
	fmt.Printf("nugget %.3f, spherical %.3f with range %.1f, residual < 1e-12: %v\n",
		v.Nugget, v.Structures[0].Contribution, v.Structures[0].Ellipsoid.Major, res.Residual < 1e-12)
	// Output:
	// nugget 0.200, spherical 0.800 with range 60.0, residual < 1e-12: true
}

// The semivariogram of a field on a 4 × 3 × 1 grid for the lag of one cell
// along x: a linear trend of slope 2 per cell gives γ = 2²/2 everywhere.
func ExampleLattice() {
	size := [3]int{4, 3, 1}
	field := make([]float64, 12)
	for j := 0; j < 3; j++ {
		for i := 0; i < 4; i++ {
			field[i+4*j] = 2*float64(i) + float64(j)
		}
	}
	g, pairs := variogram.Lattice(field, size, [3]int{1, 0, 0})
	fmt.Println(g, pairs)
	// Output: 2 9
}
