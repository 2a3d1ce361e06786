package declus_test

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/declus"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

func ExampleKNN() {
	// Three samples clustered in the West of a 100 m square, one alone in
	// the East.
	coords := []float64{
		10, 50, 0,
		12, 50, 0,
		10, 52, 0,
		90, 50, 0,
	}
	// Each cell centre of a 10 × 10 grid of 10 m cells gives its unit to
	// its nearest sample (max_samples 1).
	p := neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 200, SemiMajor: 200, Minor: 200}, MaxSamples: 1}
	ix, err := neighbor.NewIndex(coords, nil, nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := grid.New([3]float64{0, 0, -5}, [3]int{10, 10, 1}, [3]float64{10, 10, 10}, geostat.Rotation{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := declus.KNN(context.Background(), ix, g.CellCentres(nil), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The lone sample owns the 50 eastern cells: half the weight. The
	// clustered three share the West by their Voronoi cells: sample 0 only
	// 5 cells at x = 5 south of it.
	fmt.Printf("%.2f\n", r.Weights)
	// Output:
	// [0.05 0.29 0.16 0.50]
}

func ExampleCell() {
	// Four samples on a line: three within 3 m of each other, one 10 m
	// away. Cells of 5 m, two grid origins.
	coords := []float64{
		0, 0, 0,
		1, 0, 0,
		3, 0, 0,
		10, 0, 0,
	}
	p := declus.CellParams{Sizes: []float64{5}, Offsets: 2}
	r, err := declus.Cell(context.Background(), coords, nil, p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f\n", r.Weights)

	// With values, choose among cell sizes 2 to 20 m the one that
	// minimises the declustered mean (high values are clustered).
	values := []float64{4, 4.5, 3.5, 1}
	p = declus.CellParams{Sizes: declus.SizeRange(2, 20, 9), Offsets: 4, Objective: declus.Minimize}
	r, err = declus.Cell(context.Background(), coords, values, p, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("size %g: mean %.3f, weights %.4f\n", r.Size, r.Means[(int(r.Size)-2)/2], r.Weights)
	// Output:
	// [0.1667 0.1667 0.2500 0.4167]
	// size 8: mean 2.604, weights [0.1667 0.1667 0.2083 0.4583]
}
