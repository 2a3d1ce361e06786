package tbsim

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/stretchr/testify/require"
)

// smallCase is a conditional simulation on a rotated grid with block
// discretisation, a masked target and a filter.
func smallCase(t *testing.T) (Input, Params) {
	g, err := grid.New([3]float64{1000, 2000, 100}, [3]int{23, 17, 6}, [3]float64{4, 5, 3}, geostat.Rotation{DipAzimuth: 20})
	require.NoError(t, err)
	mask := make([]bool, g.NumCells())
	for c := range mask {
		mask[c] = c%7 != 3
	}
	m, err := grid.NewMasked(g, mask)
	require.NoError(t, err)
	filter := make([]bool, m.NumActive())
	for a := range filter {
		filter[a] = a%11 != 5
	}
	v, err := geostat.NewVariogram(0.1,
		structure(geostat.Spherical, 0, 0.5, 40, 25, 10, geostat.Rotation{DipAzimuth: 30}),
		structure(geostat.Exponential, 0, 0.4, 80, 60, 20, geostat.Rotation{DipAzimuth: 30}))
	require.NoError(t, err)
	lo, hi := g.BoundingBox()
	var coords, values []float64
	for i := 0; i < 60; i++ {
		u := float64(i)
		coords = append(coords, lo[0]+math.Mod(u*37.1, hi[0]-lo[0]), lo[1]+math.Mod(u*53.7, hi[1]-lo[1]), lo[2]+math.Mod(u*7.3, hi[2]-lo[2]))
		values = append(values, math.Exp(math.Sin(u)))
	}
	z, p, err := geostat.ScoreTable(values, nil)
	require.NoError(t, err)
	d, err := geostat.NewDistribution(z, p, geostat.Tail{Bound: 0, Power: 1}, geostat.Tail{Bound: 4, Power: 1})
	require.NoError(t, err)
	prm := DefaultParams()
	prm.Realisations = 3
	prm.Lines = 50
	prm.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 1, NZ: 2}
	prm.SaveGaussian = true
	return Input{Masked: m, Filter: filter, Coords: coords, Values: values, Variogram: v, Distribution: d}, prm
}

// Oracle 11 (docs/math.md 8.1): the same request and seed give bit-identical
// ensembles (all four outputs, NaN where filtered) for GOMAXPROCS = 1, 2, 4
// and three tilings, with simple and ordinary kriging.
func TestDeterministic(t *testing.T) {
	in, p := smallCase(t)
	var ref *Result
	for _, method := range []kriging.Method{kriging.Simple, kriging.Ordinary} {
		p.Method = method
		ref = nil
		for _, procs := range []int{1, 2, 4} {
			for _, rows := range []int{1, 7, 0} {
				old := runtime.GOMAXPROCS(procs)
				p.TileRows = rows
				res, err := Run(context.Background(), in, p)
				runtime.GOMAXPROCS(old)
				require.NoError(t, err)
				if ref == nil {
					ref = res
					continue
				}
				for name, pair := range map[string][2][]float64{"block": {ref.Block, res.Block}, "blockG": {ref.BlockGaussian, res.BlockGaussian},
					"point": {ref.Point, res.Point}, "pointG": {ref.PointGaussian, res.PointGaussian}} {
					require.Equal(t, len(pair[0]), len(pair[1]))
					for i := range pair[0] {
						a, b := pair[0][i], pair[1][i]
						if !(a == b || math.IsNaN(a) && math.IsNaN(b)) {
							t.Fatalf("%s %v procs %d rows %d: index %d differs: %v vs %v", name, method, procs, rows, i, a, b)
						}
					}
				}
			}
		}
		t.Logf("%v: stats %+v", method, ref.Stats)
	}
}
