package tilejob_test

import (
	"context"
	"fmt"
	"math"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/geostat-engine/geostat/worker/cluster/tilejob"
)

// An estimation's input is self-contained (here knn onto a grid of 10,000
// cells, tiles of 4,096 cells): a compute worker decodes it and estimates
// any tile with the values the whole estimate gives those cells.
func Example() {
	g, _ := grid.New([3]float64{0, 0, 0}, [3]int{100, 100, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	e := &tilejob.Estimation{Kind: tilejob.KNN,
		Coords: []float64{10, 10, 0.5, 60, 40, 0.5, 90, 80, 0.5}, Values: []float64{1, 2, 4},
		Search: neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 60, SemiMajor: 60, Minor: 60}, MaxSamples: 2, MinSamples: 1},
		Target: tilejob.Target{Grid: g}}
	in, _ := tilejob.Encode(e)
	d, _ := tilejob.Decode(in)
	es, _ := tilejob.NewEstimator(d)
	tiles := tilejob.Tiles(d.Target.Len(), 4096)
	fmt.Println("tiles:", len(tiles), tiles[2].Key())

	cols, _ := es.Estimate(context.Background(), tiles[2].Lo, tiles[2].Hi, nil)
	whole, _ := es.Estimate(context.Background(), 0, d.Target.Len(), nil)
	same := true
	for i, v := range cols[0] {
		same = same && math.Float64bits(v) == math.Float64bits(whole[0][tiles[2].Lo+i])
	}
	fmt.Println("tile equals the whole estimate:", same)
	// Output:
	// tiles: 3 t8192-10000
	// tile equals the whole estimate: true
}
