package kriging

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// TestEstimateUpdatesAgainstDense follows grid rows, where Estimate updates
// most factorisations from the previous target's (several times in a row
// before a fresh one), and checks every estimate and variance against the
// dense reference solve of the same neighbours: simple and ordinary kriging,
// points and blocks, a model with 10 % nugget and an exponential one
// without nugget on data strung along lines (worse conditioned), to 1e-9.
func TestEstimateUpdatesAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	// Drill-hole-like strings of data: 30 holes of 12 samples 4 m apart.
	var data []float64
	for h := 0; h < 30; h++ {
		x0, y0 := rng.Float64()*300, rng.Float64()*300
		for s := 0; s < 12; s++ {
			data = append(data, x0+0.1*float64(s), y0, 60-4*float64(s))
		}
	}
	values := make([]float64, len(data)/3)
	for i := range values {
		values[i] = 1 + rng.NormFloat64()
	}
	g, err := grid.New([3]float64{0, 0, 10}, [3]int{40, 6, 2}, [3]float64{7.5, 50, 20}, geostat.Rotation{})
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	nt := len(targets) / 3
	noNugget := mustVariogram(t, 0, geostat.Structure{Type: geostat.Exponential, Contribution: 1, Ellipsoid: iso(200)})
	models := map[string]*geostat.Variogram{"nugget": twoStructure(t, 0.1), "no-nugget": noNugget}
	blocks := map[string]grid.BlockDiscretisation{"point": {NX: 1, NY: 1, NZ: 1}, "block": {NX: 2, NY: 2, NZ: 1}}
	for mn, v := range models {
		for bn, d := range blocks {
			for _, m := range []Method{Simple, Ordinary} {
				t.Run(mn+"/"+bn+"/"+m.String(), func(t *testing.T) {
					p := Params{Variogram: v, Method: m, Mean: 1, Search: wide(150, 24), Discretisation: d, CellSize: g.CellSize}
					k := mustKriger(t, data, values, p)
					out := allOutputs(nt)
					require.NoError(t, k.Estimate(t.Context(), targets, &out, nil))
					st := k.Stats()
					require.Greater(t, st.Updated, int64(nt/3), "many systems are updates")
					offsets := worldOffsets(t, d, g.CellSize, geostat.Rotation{})
					s := k.NewSolver()
					mc, mv := k.Data()
					for q := 0; q < nt; q++ {
						c := [3]float64{targets[3*q], targets[3*q+1], targets[3*q+2]}
						sol, ok := s.Solve(c[0], c[1], c[2])
						require.True(t, ok)
						ref := denseSolve(t, v, m == Ordinary, mc, sol.Neighbors, c, offsets)
						est := 0.0
						for a, i := range sol.Neighbors {
							if m == Simple {
								est += ref.weights[a] * (mv[i] - 1)
							} else {
								est += ref.weights[a] * mv[i]
							}
						}
						if m == Simple {
							est++
						}
						require.InDelta(t, est, out.Estimate[q], 1e-9, "target %d", q)
						require.InDelta(t, ref.variance, out.Variance[q], 1e-9, "target %d", q)
					}
				})
			}
		}
	}
}

// TestEstimateVarianceWithoutValues checks that a weights-only kriger (nil
// values, so the factorisations carry no y) estimates kriging variances
// along grid rows, with updates, equal to those of Solve, for simple and
// ordinary kriging.
func TestEstimateVarianceWithoutValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	data := randomPoints(rng, 200, 300, 300, 60)
	g, err := grid.New([3]float64{0, 0, 10}, [3]int{30, 4, 2}, [3]float64{10, 75, 20}, geostat.Rotation{})
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	nt := len(targets) / 3
	for _, m := range []Method{Simple, Ordinary} {
		k := mustKriger(t, data, nil, Params{Variogram: twoStructure(t, 0.1), Method: m, Search: wide(150, 16)})
		out := Output{Variance: make([]float64, nt)}
		require.NoError(t, k.Estimate(t.Context(), targets, &out, nil))
		require.Greater(t, k.Stats().Updated, int64(0))
		s := k.NewSolver()
		for q := 0; q < nt; q++ {
			sol, ok := s.Solve(targets[3*q], targets[3*q+1], targets[3*q+2])
			require.True(t, ok)
			require.InDelta(t, sol.Variance, out.Variance[q], 1e-12, "%v target %d", m, q)
		}
	}
}
