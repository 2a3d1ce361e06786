package ties_test

import (
	"context"
	"fmt"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/ties"
	"github.com/geostat-engine/geostat/neighbor"
)

// Three assays at the detection limit 0.01 along a drill hole, every 2 m.
// The search (radius 2.5 m, 2 samples) finds each datum's two neighbours in
// the hole, so the local means are 1.35 (between 2.5 and 0.2) for the
// second datum, 0.25 (between 0.2 and 0.3) for the fourth and 1.05 (between
// 0.3 and 1.8) for the sixth: the ranks q are 3, 1 and 2 (the means differ,
// so the seed plays no part). The physical bound 0 makes the group, at the
// global minimum v = 0.01, one-sided with v⁺ = 0.2, k = 3 and τ = ½:
// z'_q = 0.01 + (q − 1)·0.5·(0.2 − 0.01)/3 = 0.01 + (q − 1)·0.031667, that is
// 0.0733 (q = 3), 0.0100 (q = 1) and 0.0417 (q = 2). Untied values are
// unchanged.
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
