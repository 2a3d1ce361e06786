package neighbor_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

func ExampleNewIndex() {
	// Five samples along the x axis and one above the origin; the search
	// ellipsoid's major axis (range 10) points East at dip azimuth 0 and the
	// minor axis (range 1) is vertical.
	coords := []float64{
		0, 0, 0,
		4, 0, 0,
		-6, 0, 0,
		9, 0, 0,
		12, 0, 0,
		0, 0, 2,
	}
	p := neighbor.Params{
		Ellipsoid:  geostat.Ellipsoid{Major: 10, SemiMajor: 5, Minor: 1},
		MaxSamples: 3,
	}
	ix, err := neighbor.NewIndex(coords, nil, nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	s := ix.NewSearcher()
	idx, dist := s.Search(1, 0, 0)
	for i := range idx {
		fmt.Printf("source %d at distance %.2f\n", idx[i], dist[i])
	}
	// Output:
	// source 0 at distance 0.10
	// source 1 at distance 0.30
	// source 2 at distance 0.70
}

func ExampleIndex_Mean() {
	// Four samples at the corners of a 100 m square, one without a value.
	coords := []float64{
		0, 0, 0,
		100, 0, 0,
		0, 100, 0,
		100, 100, 0,
	}
	values := []float64{1, 2, 3, math.NaN()}
	p := neighbor.Params{
		Ellipsoid:  geostat.Ellipsoid{Major: 80, SemiMajor: 80, Minor: 80},
		MaxSamples: 2,
	}
	ix, err := neighbor.NewIndex(coords, values, nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The centres of a 2 × 2 grid of 50 m cells over the lower left quarter.
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{2, 2, 1}, [3]float64{50, 50, 10}, geostat.Rotation{})
	if err != nil {
		fmt.Println(err)
		return
	}
	targets := g.CellCentres(nil)
	out := make([]float64, g.NumCells())
	if err := ix.Mean(context.Background(), values, targets, out, nil); err != nil {
		fmt.Println(err)
		return
	}
	// The first cell's centre (25, 25) is 35.4 m from source 0 and 79.1 m
	// from sources 1 and 2: the tie goes to the lower index, source 1. The
	// last cell's centre ignores source 3 (no value) and averages sources 1
	// and 2, both 79.1 m away.
	fmt.Println(out)
	// Output:
	// [1.5 1.5 2 2.5]
}

func ExampleIndex_IDW() {
	// Three samples on the x axis; the search ellipsoid is a 100 m sphere.
	coords := []float64{
		0, 0, 0,
		10, 0, 0,
		30, 0, 0,
	}
	values := []float64{1, 2, 4}
	p := neighbor.Params{
		Ellipsoid:  geostat.Ellipsoid{Major: 100, SemiMajor: 100, Minor: 100},
		MaxSamples: 3,
	}
	ix, err := neighbor.NewIndex(coords, values, nil, p)
	if err != nil {
		fmt.Println(err)
		return
	}
	// At x = 5 the samples are 5, 5 and 25 m away: weights 1/25, 1/25 and
	// 1/625 with power 2, so (25·1 + 25·2 + 1·4)/51. At x = 10 the target
	// is on sample 1 and gets its value.
	targets := []float64{5, 0, 0, 10, 0, 0}
	out := make([]float64, 2)
	if err := ix.IDW(context.Background(), values, 2, targets, out, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.4f %.4f\n", out[0], out[1])
	// Output:
	// 1.5490 2.0000
}
