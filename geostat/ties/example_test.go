package ties_test

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
)

// Three assays at the detection limit 0.01 along a drill hole, ordered by the
// mean of their two nearest neighbours: 1.35 (between 2.5 and 0.2), 0.25
// (between 0.2 and 0.3) and 1.05 (between 0.3 and 1.8). Untied values are
// unchanged. The physical bound 0 makes the group at the global minimum
// one-sided: 0.01 + (q − 1)·0.5·(0.2 − 0.01)/3.
func ExampleBreak() {
	values := []float64{2.5, 0.01, 0.2, 0.01, 0.3, 0.01, 1.8}
	coords := make([]float64, 3*len(values))
	for i := range values {
		coords[3*i+2] = -2 * float64(i) // every 2 m down the hole
	}
	search := &neighbor.Params{
		Ellipsoid:  geostat.Ellipsoid{Major: 2.5, SemiMajor: 2.5, Minor: 2.5},
		MaxSamples: 2,
	}
	bound := 0.0
	out, err := ties.Break(context.Background(), values, coords, search,
		ties.Options{Seed: 38239342, LowerBound: &bound})
	if err != nil {
		panic(err)
	}
	for i, v := range values {
		fmt.Printf("%4.2f -> %.4f\n", v, out[i])
	}
	// Output:
	// 2.50 -> 2.5000
	// 0.01 -> 0.0733
	// 0.20 -> 0.2000
	// 0.01 -> 0.0100
	// 0.30 -> 0.3000
	// 0.01 -> 0.0417
	// 1.80 -> 1.8000
}
