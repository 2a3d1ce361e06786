package kriging

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// TestAgainstDenseSolve compares weights, sub-point weights, multiplier and
// variance with the dense reference (gonum LU on the full, bordered system
// built from geostat.Variogram.Covariance) to 1e-10, on random data and
// targets: simple and ordinary, point and block, with and without nugget, a
// two-structure anisotropic rotated model, and intrinsic models (linear
// structure) with ordinary kriging.
func TestAgainstDenseSolve(t *testing.T) {
	linear := func(c0 float64, withSpherical bool) *geostat.Variogram {
		s := []geostat.Structure{{Type: geostat.Linear, Contribution: 0.5, Ellipsoid: geostat.Ellipsoid{
			Major: 400, SemiMajor: 250, Minor: 80, Rotation: geostat.Rotation{DipAzimuth: 120, Dip: 30, Pitch: 45}}}}
		if withSpherical {
			s = append(s, geostat.Structure{Type: geostat.Spherical, Contribution: 0.7, Ellipsoid: iso(150)})
		}
		return mustVariogram(t, c0, s...)
	}
	block := grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 3}
	cell := [3]float64{25, 20, 10}
	rot := geostat.Rotation{DipAzimuth: 35, Dip: 10, Pitch: 0}
	cases := []struct {
		name   string
		v      *geostat.Variogram
		method Method
		block  bool
	}{
		{"sk_point", twoStructure(t, 0), Simple, false},
		{"sk_point_nugget", twoStructure(t, 0.1), Simple, false},
		{"ok_point", twoStructure(t, 0), Ordinary, false},
		{"ok_point_nugget", twoStructure(t, 0.1), Ordinary, false},
		{"sk_block", twoStructure(t, 0), Simple, true},
		{"sk_block_nugget", twoStructure(t, 0.1), Simple, true},
		{"ok_block", twoStructure(t, 0), Ordinary, true},
		{"ok_block_nugget", twoStructure(t, 0.1), Ordinary, true},
		{"ok_linear_point", linear(0, false), Ordinary, false},
		{"ok_linear_point_nugget", linear(0.2, false), Ordinary, false},
		{"ok_linear_spherical_point", linear(0, true), Ordinary, false},
		{"ok_linear_spherical_block_nugget", linear(0.1, true), Ordinary, true},
		{"ok_gaussian_cubic_spheroidal_cauchy", mustVariogram(t, 0.05,
			geostat.Structure{Type: geostat.Gaussian, Contribution: 0.3, Ellipsoid: geostat.Ellipsoid{Major: 200, SemiMajor: 120, Minor: 60, Rotation: geostat.Rotation{DipAzimuth: 200}}},
			geostat.Structure{Type: geostat.Cubic, Contribution: 0.2, Ellipsoid: iso(250)},
			geostat.Structure{Type: geostat.Spheroidal, Alpha: 5, Contribution: 0.2, Ellipsoid: iso(300)},
			geostat.Structure{Type: geostat.GeneralisedCauchy, Alpha: 3, Contribution: 0.25, Ellipsoid: iso(400)}), Ordinary, true},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(ci)))
			// Coordinates with a large offset, as in a mine grid.
			data := randomPoints(rng, 150, 500, 500, 120)
			for i := 0; i < len(data); i += 3 {
				data[i] += 452000
				data[i+1] += 7391000
				data[i+2] += 1200
			}
			p := Params{Variogram: c.v, Method: c.method, Search: wide(250, 24)}
			offsets := []float64{0, 0, 0}
			if c.block {
				p.Discretisation, p.CellSize, p.Rotation = block, cell, rot
				offsets = worldOffsets(t, block, cell, rot)
			}
			k := mustKriger(t, data, nil, p)
			coords, _ := k.Data()
			s := k.NewSolver()
			solved := 0
			for q := 0; q < 40; q++ {
				x, y, z := 452000+rng.Float64()*500, 7391000+rng.Float64()*500, 1200+rng.Float64()*120
				sol, ok := s.Solve(x, y, z)
				require.True(t, ok)
				ref := denseSolve(t, c.v, c.method == Ordinary, coords, sol.Neighbors, [3]float64{x, y, z}, offsets)
				n := len(sol.Neighbors)
				require.Len(t, sol.SubWeights, n*len(offsets)/3)
				for a := 0; a < n; a++ {
					require.InDelta(t, ref.weights[a], sol.Weights[a], 1e-10, "weight %d", a)
					for pp := range ref.sub {
						require.InDelta(t, ref.sub[pp][a], sol.SubWeights[pp*n+a], 1e-10, "sub-point %d weight %d", pp, a)
					}
				}
				require.InDelta(t, ref.mu, sol.Lagrange, 1e-10)
				require.InDelta(t, math.Max(0, ref.variance), sol.Variance, 1e-10)
				solved++
			}
			assert.Equal(t, 40, solved)
			s.Flush()
			st := k.Stats()
			assert.Zero(t, st.Regularised)
			assert.Equal(t, int64(40), st.Systems)
		})
	}
}

// TestCollinearData checks collinear data (a drill hole) against the dense
// reference: not singular for a spherical model.
func TestCollinearData(t *testing.T) {
	var data []float64
	for i := 0; i < 30; i++ {
		data = append(data, 100+0.3*float64(i), 50+0.2*float64(i), 80-2*float64(i))
	}
	v := twoStructure(t, 0)
	for _, m := range []Method{Simple, Ordinary} {
		k := mustKriger(t, data, nil, Params{Variogram: v, Method: m, Search: wide(500, 20)})
		sol, ok := k.NewSolver().Solve(110, 60, 40)
		require.True(t, ok)
		merged, _ := k.Data()
		ref := denseSolve(t, v, m == Ordinary, merged, sol.Neighbors, [3]float64{110, 60, 40}, []float64{0, 0, 0})
		for a := range sol.Weights {
			assert.InDelta(t, ref.weights[a], sol.Weights[a], 1e-10)
		}
		assert.InDelta(t, ref.variance, sol.Variance, 1e-10)
	}
}

// TestTableDoesNotChangeResults checks that the data-to-data table and the
// direct evaluation give bit-identical weights, with the table in a spatial
// order (random data) and in input order (data along drill holes).
func TestTableDoesNotChangeResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	random := randomPoints(rng, 200, 500, 500, 100)
	var holes []float64
	for h := 0; h < 10; h++ {
		x, y := rng.Float64()*500, rng.Float64()*500
		for s := 0; s < 20; s++ {
			holes = append(holes, x+0.1*float64(s), y, 100-5*float64(s))
		}
	}
	for _, data := range [][]float64{random, holes} {
		for _, m := range []Method{Simple, Ordinary} {
			p := Params{Variogram: twoStructure(t, 0.1), Method: m, Search: wide(200, 16),
				Discretisation: grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, CellSize: [3]float64{10, 10, 5}}
			withTable := mustKriger(t, data, nil, p)
			p.TableLimit = -1
			without := mustKriger(t, data, nil, p)
			require.True(t, withTable.Stats().Table)
			identity := true
			for i, m := range withTable.MergedIndex() {
				identity = identity && m == int32(i)
			}
			require.Equal(t, &data[0] == &random[0], !identity, "spatial order for random data only")
			require.Equal(t, withTable.MergedIndex(), without.MergedIndex())
			require.False(t, without.Stats().Table)
			s1, s2 := withTable.NewSolver(), without.NewSolver()
			for q := 0; q < 50; q++ {
				x, y, z := rng.Float64()*500, rng.Float64()*500, rng.Float64()*100
				a, ok1 := s1.Solve(x, y, z)
				b, ok2 := s2.Solve(x, y, z)
				require.Equal(t, ok1, ok2)
				require.Equal(t, a.Neighbors, b.Neighbors)
				require.Equal(t, a.SubWeights, b.SubWeights)
				require.Equal(t, a.Weights, b.Weights)
				require.Equal(t, math.Float64bits(a.Variance), math.Float64bits(b.Variance))
			}
		}
	}
}
