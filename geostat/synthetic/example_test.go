package synthetic_test

import (
	"fmt"

	"github.com/geostat-engine/geostat/geostat/synthetic"
)

func ExampleNew() {
	c, err := synthetic.New(synthetic.Kriging(synthetic.Medium, synthetic.DefaultSeed))
	if err != nil {
		panic(err)
	}
	fmt.Println("samples:", len(c.Coords)/3, "holes:", c.Intervals.NumHoles())
	fmt.Println("grid:", c.Grid.Size, "cells of", c.Grid.CellSize, "m")
	fmt.Printf("variogram: nugget %.2f, %d structures, sill %.2f\n", c.Variogram.Nugget, len(c.Variogram.Structures), c.Variogram.TotalSill())
	// Output:
	// samples: 2000 holes: 56
	// grid: [100 100 20] cells of [10 10 10] m
	// variogram: nugget 0.10, 2 structures, sill 1.00
}
