package kriging_test

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
)

// sphericalModel is a spherical variogram of range 10 and sill 1.
func sphericalModel() *geostat.Variogram {
	v, err := geostat.NewVariogram(0, geostat.Structure{
		Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 10, SemiMajor: 10, Minor: 10},
	})
	if err != nil {
		panic(err)
	}
	return v
}

// Ordinary kriging of a point between two data: the weights, the Lagrange
// multiplier (convention K·λ + μ·1 = k) and the kriging variance of
// docs/math.md 8.1.
func ExampleSolver_Solve() {
	coords := []float64{0, 0, 0, 4, 0, 0}
	k, err := kriging.New(coords, nil, kriging.Params{
		Variogram: sphericalModel(),
		Method:    kriging.Ordinary,
		Search: neighbor.Params{
			Ellipsoid:  geostat.Ellipsoid{Major: 20, SemiMajor: 20, Minor: 20},
			MaxSamples: 8,
		},
	})
	if err != nil {
		panic(err)
	}
	s := k.NewSolver()
	sol, ok := s.Solve(2, 0, 0)
	fmt.Println(ok, sol.Neighbors)
	fmt.Printf("weights %.4f, μ = %.4f, σ² = %.4f\n", sol.Weights, sol.Lagrange, sol.Variance)
	// Output:
	// true [0 1]
	// weights [0.5000 0.5000], μ = -0.0120, σ² = 0.3080
}

// Simple kriging of the 2 × 2 × 2-discretised blocks of a small grid, with
// the diagnostics.
func ExampleKriger_Estimate() {
	coords := []float64{2, 2, 0.5, 7, 3, 0.5, 4, 8, 0.5}
	values := []float64{1.2, -0.4, 0.3}
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{2, 2, 1}, [3]float64{5, 5, 1}, geostat.Rotation{})
	if err != nil {
		panic(err)
	}
	k, err := kriging.New(coords, values, kriging.Params{
		Variogram:      sphericalModel(),
		Method:         kriging.Simple,
		Mean:           0,
		Search:         neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 15, SemiMajor: 15, Minor: 15}, MaxSamples: 3},
		Discretisation: grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2},
		CellSize:       g.CellSize,
		Rotation:       g.Rotation,
	})
	if err != nil {
		panic(err)
	}
	targets := g.CellCentres(nil)
	n := g.NumCells()
	out := kriging.Output{Estimate: make([]float64, n), Variance: make([]float64, n), Efficiency: make([]float64, n)}
	if err := k.Estimate(context.Background(), targets, &out, nil); err != nil {
		panic(err)
	}
	for c := 0; c < n; c++ {
		fmt.Printf("block %d: estimate %6.3f  variance %.3f  efficiency %.3f\n", c, out.Estimate[c], out.Variance[c], out.Efficiency[c])
	}
	// Output:
	// block 0: estimate  0.776  variance 0.123  efficiency 0.818
	// block 1: estimate -0.241  variance 0.150  efficiency 0.779
	// block 2: estimate  0.369  variance 0.197  efficiency 0.709
	// block 3: estimate -0.084  variance 0.387  efficiency 0.428
}
