package kriging

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// sph is the unit spherical correlation of range a at distance h.
func sph(h, a float64) float64 {
	r := h / a
	if r >= 1 {
		return 0
	}
	return 1 - 1.5*r + 0.5*r*r*r
}

// solveOne kriges one target with a fresh Kriger and returns a copy of the
// solution.
func solveOne(t *testing.T, coords []float64, p Params, x, y, z float64) Solution {
	t.Helper()
	k := mustKriger(t, coords, nil, p)
	sol, ok := k.NewSolver().Solve(x, y, z)
	require.True(t, ok)
	out := *sol
	out.Neighbors = append([]int32(nil), sol.Neighbors...)
	out.Weights = append([]float64(nil), sol.Weights...)
	out.SubWeights = append([]float64(nil), sol.SubWeights...)
	return out
}

// TestOneDatum checks docs/math.md 8.1 item 7, first bullet: spherical
// a = 10, sill 1, one datum at distance 5.
func TestOneDatum(t *testing.T) {
	data := []float64{0, 0, 0}
	v := spherical(t, 0, 1, 10)

	sk := solveOne(t, data, Params{Variogram: v, Method: Simple, Search: wide(100, 8)}, 5, 0, 0)
	assert.InDelta(t, 0.3125, sk.Weights[0], 1e-12)
	assert.InDelta(t, 0.90234375, sk.Variance, 1e-12)
	assert.Zero(t, sk.Lagrange)

	ok := solveOne(t, data, Params{Variogram: v, Method: Ordinary, Search: wide(100, 8)}, 5, 0, 0)
	assert.InDelta(t, 1, ok.Weights[0], 1e-12)
	// Convention K·λ + μ·1 = k: μ = C(5) − C(0).
	assert.InDelta(t, -0.6875, ok.Lagrange, 1e-12)
	assert.InDelta(t, 1.375, ok.Variance, 1e-12)

	// Nugget 0.2 + spherical 0.8: the nugget sits on K's diagonal only.
	vn := spherical(t, 0.2, 0.8, 10)
	skn := solveOne(t, data, Params{Variogram: vn, Method: Simple, Search: wide(100, 8)}, 5, 0, 0)
	assert.InDelta(t, 0.25, skn.Weights[0], 1e-12)
	assert.InDelta(t, 1-0.25*0.8*0.3125, skn.Variance, 1e-12)
}

// TestTwoCollinearData checks docs/math.md 8.1 item 7, second bullet.
func TestTwoCollinearData(t *testing.T) {
	data := []float64{0, 0, 0, 4, 0, 0}
	v := spherical(t, 0, 1, 10)
	c4, c2 := sph(4, 10), sph(2, 10) // 0.432, 0.704

	sk := solveOne(t, data, Params{Variogram: v, Method: Simple, Search: wide(100, 8)}, 2, 0, 0)
	lam := c2 / (1 + c4)
	for _, w := range sk.Weights {
		assert.InDelta(t, lam, w, 1e-12)
		assert.InDelta(t, 0.4916201, w, 5e-8)
	}
	assert.InDelta(t, 1-2*lam*c2, sk.Variance, 1e-12)
	assert.InDelta(t, 0.3077989, sk.Variance, 5e-8)

	ok := solveOne(t, data, Params{Variogram: v, Method: Ordinary, Search: wide(100, 8)}, 2, 0, 0)
	for _, w := range ok.Weights {
		assert.InDelta(t, 0.5, w, 1e-12)
	}
	assert.InDelta(t, -0.012, ok.Lagrange, 1e-12)
	assert.InDelta(t, 0.308, ok.Variance, 1e-12)
}

// TestTargetOnDatum checks λ = e_i, estimate = datum and variance 0 when the
// target coincides with a datum and there is no nugget (SK and OK).
func TestTargetOnDatum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	data := randomPoints(rng, 25, 100, 100, 30)
	values := make([]float64, 25)
	for i := range values {
		values[i] = rng.NormFloat64()
	}
	v := twoStructure(t, 0)
	for _, m := range []Method{Simple, Ordinary} {
		k := mustKriger(t, data, values, Params{Variogram: v, Method: m, Search: wide(1000, 12)})
		s := k.NewSolver()
		targets := append([]float64(nil), data...)
		out := Output{Estimate: make([]float64, 25), Variance: make([]float64, 25)}
		require.NoError(t, k.Estimate(t.Context(), targets, &out, nil))
		for i := 0; i < 25; i++ {
			sol, ok := s.Solve(data[3*i], data[3*i+1], data[3*i+2])
			require.True(t, ok)
			for a, j := range sol.Neighbors {
				want := 0.0
				if j == k.MergedIndex()[i] {
					want = 1
				}
				assert.InDelta(t, want, sol.Weights[a], 1e-12, "%v datum %d neighbour %d", m, i, j)
			}
			assert.InDelta(t, 0, sol.Variance, 1e-12)
			assert.InDelta(t, values[i], out.Estimate[i], 1e-12)
			assert.InDelta(t, 0, out.Variance[i], 1e-12)
		}
	}
}

// TestWeightsBeyondRange checks that simple kriging weights vanish when
// every datum is beyond the (spherical) range, the estimate is the mean and
// the variance the sill.
func TestWeightsBeyondRange(t *testing.T) {
	data := []float64{20, 0, 0, 0, 25, 3, -14, -14, 0}
	values := []float64{5, 7, 9}
	k := mustKriger(t, data, values, Params{Variogram: spherical(t, 0.1, 0.9, 10), Method: Simple, Mean: 0, Search: wide(100, 8)})
	sol, ok := k.NewSolver().Solve(0, 0, 0)
	require.True(t, ok)
	require.Len(t, sol.Weights, 3)
	for _, w := range sol.Weights {
		assert.Zero(t, w)
	}
	assert.InDelta(t, 1, sol.Variance, 1e-15)
	out := Output{Estimate: make([]float64, 1)}
	require.NoError(t, k.Estimate(t.Context(), []float64{0, 0, 0}, &out, nil))
	assert.Zero(t, out.Estimate[0])
}

// TestScreening checks the Markov property of the exponential model along a
// line: the nearer datum screens the farther one completely.
func TestScreening(t *testing.T) {
	v := mustVariogram(t, 0, geostat.Structure{Type: geostat.Exponential, Contribution: 1, Ellipsoid: iso(30)})
	sk := solveOne(t, []float64{0, 0, 0, 10, 0, 0}, Params{Variogram: v, Method: Simple, Search: wide(100, 8)}, 20, 0, 0)
	assert.InDelta(t, 0, sk.Weights[0], 1e-15)
	assert.InDelta(t, math.Exp(-1), sk.Weights[1], 1e-15)
	assert.InDelta(t, 0.3678794, sk.Weights[1], 5e-8)
}

// TestVarianceIsMeanSquaredError checks the kriging weights and variances
// against their definition rather than their formulas: on 20,000 Gaussian
// vectors (data and target) drawn with the covariance of
// geostat.Variogram.Covariance through gonum's Cholesky factor, the error
// of the Solver's weights, z* − z(x0), has mean 0 and mean square σ²
// (each within 4 standard errors: σ/√N and σ²√(2/N)). Simple kriging uses
// the field's mean; for ordinary kriging every vector gets its own mean,
// drawn uniformly in [−100, 100], which unbiased weights must filter (the
// error would otherwise have a spread of about |1 − Σλ|·58). Points and
// blocks (the block value is the mean over the same sub-points the Kriger
// uses, drawn jointly with the data).
func TestVarianceIsMeanSquaredError(t *testing.T) {
	const N = 20000
	rng := rand.New(rand.NewPCG(3, 5))
	v := twoStructure(t, 0.1)
	data := randomPoints(rng, 14, 300, 300, 60)
	centre := [3]float64{150, 150, 30}
	for _, m := range []Method{Simple, Ordinary} {
		for _, block := range []bool{false, true} {
			p := Params{Variogram: v, Method: m, Mean: 2, Search: wide(1000, 16)}
			offsets := []float64{0, 0, 0}
			if block {
				p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}
				p.CellSize = [3]float64{40, 30, 20}
				offsets = worldOffsets(t, p.Discretisation, p.CellSize, geostat.Rotation{})
			}
			k := mustKriger(t, data, nil, p)
			sol, ok := k.NewSolver().Solve(centre[0], centre[1], centre[2])
			require.True(t, ok)
			coords, _ := k.Data()
			n, np := len(sol.Neighbors), len(offsets)/3
			// The joint points: the neighbours, then the sub-points.
			pts := make([][3]float64, 0, n+np)
			for _, i := range sol.Neighbors {
				pts = append(pts, [3]float64{coords[3*i], coords[3*i+1], coords[3*i+2]})
			}
			for q := 0; q < np; q++ {
				pts = append(pts, [3]float64{centre[0] + offsets[3*q], centre[1] + offsets[3*q+1], centre[2] + offsets[3*q+2]})
			}
			cov := mat.NewSymDense(len(pts), nil)
			for a := range pts {
				for b := 0; b <= a; b++ {
					cov.SetSym(a, b, v.Covariance(pts[a], pts[b]))
				}
			}
			var chol mat.Cholesky
			require.True(t, chol.Factorize(cov))
			var l mat.TriDense
			chol.LTo(&l)
			eps := make([]float64, len(pts))
			z := mat.NewVecDense(len(pts), nil)
			var sum, sum2 float64
			for r := 0; r < N; r++ {
				for a := range eps {
					eps[a] = rng.NormFloat64()
				}
				z.MulVec(&l, mat.NewVecDense(len(eps), eps))
				mean := p.Mean
				if m == Ordinary {
					mean = 200*rng.Float64() - 100
				}
				truth := 0.0
				for q := 0; q < np; q++ {
					truth += z.AtVec(n+q) + mean
				}
				truth /= float64(np)
				est := 0.0
				for a, w := range sol.Weights {
					zi := z.AtVec(a) + mean
					if m == Simple {
						zi -= p.Mean
					}
					est += w * zi
				}
				if m == Simple {
					est += p.Mean
				}
				e := est - truth
				sum += e
				sum2 += e * e
			}
			mean, mse := sum/N, sum2/N
			sd := math.Sqrt(sol.Variance)
			t.Logf("%v block=%v: σ² %.5f, mean error %.5f, mean squared error %.5f", m, block, sol.Variance, mean, mse)
			assert.InDelta(t, 0, mean, 4*sd/math.Sqrt(N), "%v block=%v mean error", m, block)
			assert.InDelta(t, sol.Variance, mse, 4*sol.Variance*math.Sqrt(2.0/N), "%v block=%v mean squared error", m, block)
		}
	}
}

// TestBlockCovarianceCube checks docs/math.md 8.1 item 8: C̄(V,V) of a cube
// of side s discretised n³, spherical a = 1, sill 1, through the Kriger's
// block machinery (the prior variance, and the SK variance of a block with
// no datum in range), and the nugget's c0/n³.
func TestBlockCovarianceCube(t *testing.T) {
	table := []struct {
		side float64
		n    int
		want float64
	}{
		{0.25, 2, 0.79169}, {0.25, 3, 0.76928}, {0.25, 5, 0.75981}, {0.25, 9, 0.75650},
		{0.5, 2, 0.59560}, {0.5, 3, 0.55462}, {0.5, 5, 0.53780}, {0.5, 9, 0.53202},
		{1.0, 2, 0.28895}, {1.0, 3, 0.23730}, {1.0, 5, 0.21938}, {1.0, 9, 0.21391},
	}
	far := []float64{50, 50, 50}
	for _, c := range table {
		t.Run(fmt.Sprintf("s%g_n%d", c.side, c.n), func(t *testing.T) {
			p := Params{
				Variogram: spherical(t, 0, 1, 1), Method: Simple,
				Search:         wide(1000, 4),
				Discretisation: grid.BlockDiscretisation{NX: c.n, NY: c.n, NZ: c.n},
				CellSize:       [3]float64{c.side, c.side, c.side},
				Rotation:       geostat.Rotation{DipAzimuth: 33, Dip: 12, Pitch: 71},
			}
			k := mustKriger(t, far, nil, p)
			assert.InDelta(t, c.want, k.PriorVariance(), 5e-6)
			sol, ok := k.NewSolver().Solve(0, 0, 0)
			require.True(t, ok)
			assert.Zero(t, sol.Weights[0])
			assert.InDelta(t, c.want, sol.Variance, 5e-6)

			p.Variogram = spherical(t, 0.3, 1, 1)
			kn := mustKriger(t, far, nil, p)
			assert.InDelta(t, c.want+0.3/float64(c.n*c.n*c.n), kn.PriorVariance(), 5e-6)
		})
	}
}
