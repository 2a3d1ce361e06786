package kriging

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// TestUpdateAgainstFresh deletes rows of an L D Lᵀ factor and appends one
// to three at a time in random sequences (every position, sizes 1..40), and
// checks the factor, 1/D, the carried rows D⁻¹L⁻¹y and D⁻¹L⁻¹1 and the
// vector solved with the appends against a fresh factorisation of the same
// matrix in the same row order, to 1e-10 relative.
func TestUpdateAgainstFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const size = 48
	full, _ := randomSPD(rng, size) // the pool of "data": rows of the global matrix
	yAll := make([]float64, size)
	for i := range yAll {
		yAll[i] = rng.NormFloat64()
	}
	unit := ones(size)
	// fresh factorises the submatrix of full in the order ord.
	fresh := func(ord []int) ([]float64, []float64, []float64, []float64) {
		n := len(ord)
		a := make([]float64, packedLen(n))
		for r, i := range ord {
			for c, j := range ord[:r+1] {
				a[rowStart(r)+c] = full[i*size+j]
			}
		}
		inv := make([]float64, n)
		require.True(t, cholesky(a, n, inv))
		toLDL(a, inv, n)
		y, u := make([]float64, n), ones(n)
		for r, i := range ord {
			y[r] = yAll[i]
		}
		for _, v := range [][]float64{y, u} {
			forward(a, n, unit, v)
			for r := range v {
				v[r] *= inv[r]
			}
		}
		return a, inv, y, u
	}
	m := 40
	pk, bk := make([]float64, size), make([]float64, size)
	for trial := 0; trial < 200; trial++ {
		n0 := 1 + rng.IntN(m)
		ord := rng.Perm(size)[:n0]
		l0, inv0, y0, u0 := fresh(ord)
		l := make([]float64, packedLen(size))
		inv := make([]float64, size)
		y, u := make([]float64, size), make([]float64, size)
		copy(l, l0)
		copy(inv, inv0)
		copy(y, y0)
		copy(u, u0)
		for step := 0; step < 6; step++ {
			n := len(ord)
			var v, vIn []float64
			if n > 1 && (rng.IntN(2) == 0 || n == m) {
				p := rng.IntN(n)
				deleteRow(l, inv, n, p, y, u, pk, bk)
				ord = slices.Delete(ord, p, p+1)
			} else {
				// Append 1..3 rows at once, with a right-hand side.
				q := min(1+rng.IntN(3), m-n)
				for a := 0; a < q; a++ {
					j := rng.IntN(size)
					for slices.Contains(ord, j) {
						j = rng.IntN(size)
					}
					ord = append(ord, j)
				}
				yv := make([]float64, q)
				for r := n; r < n+q; r++ {
					row := l[rowStart(r) : rowStart(r)+r+1]
					for c, i := range ord[:r] {
						row[c] = full[ord[r]*size+i]
					}
					row[r] = full[ord[r]*size+ord[r]]
					yv[r-n] = yAll[ord[r]]
				}
				vIn = make([]float64, n+q)
				for r := range vIn {
					vIn[r] = rng.NormFloat64()
				}
				v = slices.Clone(vIn)
				require.True(t, appendRows(l, inv, unit, n, q, y, yv, u, v, make([][]float64, 0, q+1)))
			}
			n = len(ord)
			want, winv, wy, wu := fresh(ord)
			for e := range want {
				require.InDelta(t, want[e], l[e], 1e-10*math.Max(1, math.Abs(want[e])), "trial %d step %d entry %d", trial, step, e)
			}
			if v != nil {
				forward(want, n, unit, vIn)
				for r := range vIn {
					require.InDelta(t, vIn[r], v[r], 1e-10*math.Max(1, math.Abs(vIn[r])))
				}
			}
			for r := 0; r < n; r++ {
				require.InDelta(t, winv[r], inv[r], 1e-10*math.Abs(winv[r]))
				require.InDelta(t, wy[r], y[r], 1e-10*math.Max(1, math.Abs(wy[r])))
				require.InDelta(t, wu[r], u[r], 1e-10*math.Max(1, math.Abs(wu[r])))
			}
		}
	}
}

// TestAppendRowsSingular checks that appending a copy of a row is refused.
func TestAppendRowsSingular(t *testing.T) {
	l := []float64{2, 1, 3, 0, 0, 0}
	inv := make([]float64, 3)
	require.True(t, cholesky(l, 2, inv))
	toLDL(l, inv, 2)
	// The new datum duplicates datum 0: covariances (2, 1), variance 2.
	l[3], l[4], l[5] = 2, 1, 2
	require.False(t, appendRows(l, inv, ones(3), 2, 1, nil, nil, nil, nil, make([][]float64, 0, 2)))
}

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
