package kriging

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/neighbor"
)

// allOutputs returns an Output with every field requested for nt targets.
func allOutputs(nt int) Output {
	return Output{
		Estimate: make([]float64, nt), Variance: make([]float64, nt), Samples: make([]float64, nt),
		MeanDistance: make([]float64, nt), Slope: make([]float64, nt), Efficiency: make([]float64, nt),
	}
}

// TestDiagnosticsTwoData checks the diagnostics of the two-data oracle
// (docs/math.md 8.1 item 7): OK slope λᵀk/(λᵀk − μ) = 0.704/0.716 and
// efficiency (C(0) − σ²)/C(0) = 0.692; SK slope 1.
func TestDiagnosticsTwoData(t *testing.T) {
	data := []float64{0, 0, 0, 4, 0, 0}
	values := []float64{1, 3}
	v := spherical(t, 0, 1, 10)
	k := mustKriger(t, data, values, Params{Variogram: v, Method: Ordinary, Search: wide(8, 8)})
	out := allOutputs(1)
	require.NoError(t, k.Estimate(t.Context(), []float64{2, 0, 0}, &out, nil))
	assert.InDelta(t, 2, out.Estimate[0], 1e-12)
	assert.InDelta(t, 0.308, out.Variance[0], 1e-12)
	assert.Equal(t, 2.0, out.Samples[0])
	assert.InDelta(t, 2.0/8, out.MeanDistance[0], 1e-12)
	assert.InDelta(t, 0.704/0.716, out.Slope[0], 1e-12)
	assert.InDelta(t, 0.692, out.Efficiency[0], 1e-12)

	ks := mustKriger(t, data, values, Params{Variogram: v, Method: Simple, Mean: 1.5, Search: wide(8, 8)})
	require.NoError(t, ks.Estimate(t.Context(), []float64{2, 0, 0}, &out, nil))
	lam := 0.704 / 1.432
	assert.InDelta(t, 1.5+lam*(1-1.5)+lam*(3-1.5), out.Estimate[0], 1e-12)
	assert.InDelta(t, 1, out.Slope[0], 1e-12)
	assert.InDelta(t, 2*lam*0.704, out.Efficiency[0], 1e-12)
}

// TestEstimateAgainstDense checks Estimate's estimate, variance, slope and
// efficiency for blocks against the dense reference, the slope from its
// definition Cov(Z_V, Z*)/Var(Z*) = λᵀk̄/λᵀKλ with λᵀKλ multiplied out.
func TestEstimateAgainstDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	data := randomPoints(rng, 120, 500, 500, 100)
	values := make([]float64, 120)
	for i := range values {
		values[i] = 2 + rng.NormFloat64()
	}
	targets := randomPoints(rng, 30, 500, 500, 100)
	d := grid.BlockDiscretisation{NX: 3, NY: 2, NZ: 2}
	cell := [3]float64{20, 15, 8}
	rot := geostat.Rotation{DipAzimuth: 15}
	offsets := worldOffsets(t, d, cell, rot)
	v := twoStructure(t, 0.1)
	for _, m := range []Method{Simple, Ordinary} {
		p := Params{Variogram: v, Method: m, Mean: 2, Search: wide(250, 20), Discretisation: d, CellSize: cell, Rotation: rot}
		k := mustKriger(t, data, values, p)
		out := allOutputs(30)
		require.NoError(t, k.Estimate(t.Context(), targets, &out, nil))
		s := k.NewSolver()
		mc, values := k.Data() // Neighbors index the merged data
		for q := 0; q < 30; q++ {
			c := [3]float64{targets[3*q], targets[3*q+1], targets[3*q+2]}
			sol, ok := s.Solve(c[0], c[1], c[2])
			require.True(t, ok)
			nb := sol.Neighbors
			n := len(nb)
			ref := denseSolve(t, v, m == Ordinary, mc, nb, c, offsets)
			est := 0.0
			for a, i := range nb {
				if m == Simple {
					est += ref.weights[a] * (values[i] - 2)
				} else {
					est += ref.weights[a] * values[i]
				}
			}
			if m == Simple {
				est += 2
			}
			require.InDelta(t, est, out.Estimate[q], 1e-10)
			require.InDelta(t, ref.variance, out.Variance[q], 1e-10)
			require.Equal(t, float64(n), out.Samples[q])
			// λᵀk̄ and λᵀKλ from their definitions.
			kk := mat.NewSymDense(n, nil)
			lk := 0.0
			for a := 0; a < n; a++ {
				pa := [3]float64{mc[3*nb[a]], mc[3*nb[a]+1], mc[3*nb[a]+2]}
				for b := 0; b < n; b++ {
					kk.SetSym(a, b, v.Covariance(pa, [3]float64{mc[3*nb[b]], mc[3*nb[b]+1], mc[3*nb[b]+2]}))
				}
				kb := 0.0
				for pp := 0; pp < len(offsets)/3; pp++ {
					kb += v.Covariance(pa, [3]float64{c[0] + offsets[3*pp], c[1] + offsets[3*pp+1], c[2] + offsets[3*pp+2]})
				}
				lk += ref.weights[a] * kb / float64(len(offsets)/3)
			}
			lam := mat.NewVecDense(n, ref.weights)
			lkl := mat.Inner(lam, kk, lam)
			require.InDelta(t, lk/lkl, out.Slope[q], 1e-9)
			bv := k.PriorVariance()
			require.InDelta(t, (bv-ref.variance)/bv, out.Efficiency[q], 1e-10)
			// Mean anisotropic search distance.
			e := p.Search.Ellipsoid
			sum := 0.0
			for _, i := range nb {
				dd, err := e.Distance(c, [3]float64{mc[3*i], mc[3*i+1], mc[3*i+2]})
				require.NoError(t, err)
				sum += dd
			}
			require.InDelta(t, sum/float64(n), out.MeanDistance[q], 1e-12)
		}
	}
}

// TestDuplicatesMerged checks that exact duplicates are merged with their
// values averaged, NaN values dropped, and that kriging equals kriging of the
// merged data.
func TestDuplicatesMerged(t *testing.T) {
	a, b, c := []float64{10, 20, 5}, []float64{30, 25, 6}, []float64{12, 40, 2}
	coords := append(append(append(append(append(append([]float64{}, a...), b...), a...), c...), a...), b...)
	values := []float64{1, 2, 3, 4, 5, math.NaN()}
	p := Params{Variogram: twoStructure(t, 0), Method: Ordinary, Search: wide(500, 8)}
	k := mustKriger(t, coords, values, p)
	st := k.Stats()
	assert.Equal(t, 3, st.Data)
	assert.Equal(t, 2, st.Duplicates)
	assert.Equal(t, 1, st.Dropped)
	mc, mv := k.Data()
	assert.Equal(t, append(append(append([]float64{}, a...), b...), c...), mc)
	assert.Equal(t, []float64{3, 2, 4}, mv)
	assert.Equal(t, []int32{0, 1, 0, 2, 0, -1}, k.MergedIndex())

	ref := mustKriger(t, mc, mv, p)
	targets := []float64{15, 25, 4, 10, 20, 5, 100, 100, 10}
	o1, o2 := allOutputs(3), allOutputs(3)
	require.NoError(t, k.Estimate(t.Context(), targets, &o1, nil))
	require.NoError(t, ref.Estimate(t.Context(), targets, &o2, nil))
	assert.Equal(t, o2, o1)
	assert.InDelta(t, 3, o1.Estimate[1], 1e-12) // on the merged datum
	assert.Zero(t, k.Stats().Regularised)
}

// TestSingularSystems checks that numerically singular systems (near
// duplicates, dense collinear data under a Gaussian model without nugget)
// are regularised: finite weights and estimates, no NaN, counted in Stats.
func TestSingularSystems(t *testing.T) {
	t.Run("near_duplicates", func(t *testing.T) {
		coords := []float64{0, 0, 0, 1e-12, 0, 0, 5, 0, 0}
		values := []float64{1, 3, 2}
		for _, m := range []Method{Simple, Ordinary} {
			k := mustKriger(t, coords, values, Params{Variogram: spherical(t, 0, 1, 10), Method: m, Search: wide(50, 8)})
			out := allOutputs(2)
			require.NoError(t, k.Estimate(t.Context(), []float64{1, 1, 0, 0, 0, 0}, &out, nil))
			for _, f := range [][]float64{out.Estimate, out.Variance, out.Slope, out.Efficiency} {
				for _, x := range f {
					assert.False(t, math.IsNaN(x) || math.IsInf(x, 0))
				}
			}
			// At the pair, the estimate is close to the pair's mean value
			// (the ridge of 1e-9 lets the third datum in slightly).
			assert.InDelta(t, 2, out.Estimate[1], 1e-3)
			assert.InDelta(t, 0, out.Variance[1], 1e-6)
			// Both targets share the neighbour set: one factorisation.
			assert.Equal(t, int64(1), k.Stats().Regularised)
			assert.Equal(t, int64(1), k.Stats().Reused)
		}
	})
	t.Run("gaussian_drill_hole", func(t *testing.T) {
		var coords, values []float64
		for i := 0; i < 40; i++ {
			coords = append(coords, 3, 4, float64(i))
			values = append(values, math.Sin(float64(i)/5))
		}
		v := mustVariogram(t, 0, geostat.Structure{Type: geostat.Gaussian, Contribution: 1, Ellipsoid: iso(200)})
		for _, m := range []Method{Simple, Ordinary} {
			k := mustKriger(t, coords, values, Params{Variogram: v, Method: m, Search: wide(500, 32)})
			s := k.NewSolver()
			sol, ok := s.Solve(10, 4, 20.5)
			require.True(t, ok)
			sum := 0.0
			for _, w := range sol.Weights {
				require.False(t, math.IsNaN(w) || math.IsInf(w, 0))
				sum += w
			}
			if m == Ordinary {
				assert.InDelta(t, 1, sum, 1e-9)
			}
			assert.False(t, math.IsNaN(sol.Variance))
			assert.GreaterOrEqual(t, sol.Variance, 0.0)
			s.Flush()
			assert.Equal(t, int64(1), k.Stats().Regularised)
		}
	})
}

// TestMinSamples checks that targets with too few neighbours get NaN
// estimates and variances, and that simple kriging without any neighbour
// and MinSamples 0 returns the mean and the prior variance.
func TestMinSamples(t *testing.T) {
	coords := []float64{0, 0, 0, 10, 0, 0, 0, 10, 0}
	values := []float64{1, 2, 3}
	targets := []float64{3, 3, 0, 45, 0, 0, 500, 500, 500}
	v := spherical(t, 0.2, 0.8, 50)
	p := Params{Variogram: v, Method: Ordinary, Search: neighbor.Params{Ellipsoid: iso(40), MaxSamples: 8, MinSamples: 3}}
	k := mustKriger(t, coords, values, p)
	out := allOutputs(3)
	require.NoError(t, k.Estimate(t.Context(), targets, &out, nil))
	assert.Equal(t, 3.0, out.Samples[0])
	assert.False(t, math.IsNaN(out.Estimate[0]))
	for q := 1; q < 3; q++ { // one neighbour in range, then none
		assert.True(t, math.IsNaN(out.Estimate[q]))
		assert.True(t, math.IsNaN(out.Variance[q]))
		assert.True(t, math.IsNaN(out.Slope[q]))
		assert.Equal(t, 0.0, out.Samples[q])
	}
	assert.Equal(t, int64(2), k.Stats().Unestimated)
	sol, ok := k.NewSolver().Solve(45, 0, 0)
	assert.False(t, ok)
	assert.Empty(t, sol.Neighbors)
	assert.True(t, math.IsNaN(sol.Variance))

	p.Method, p.Mean, p.Search.MinSamples = Simple, 1.25, 0
	ks := mustKriger(t, coords, values, p)
	require.NoError(t, ks.Estimate(t.Context(), targets, &out, nil))
	assert.Equal(t, 1.25, out.Estimate[2])
	assert.Equal(t, 1.0, out.Variance[2])
	assert.Equal(t, 0.0, out.Samples[2])
	assert.Equal(t, 1.0, out.Samples[1])
}

// TestDeterministicAcrossGOMAXPROCS checks bit-identical output and
// statistics for 1, 2, 4 and 7 workers over enough targets (ten chunks)
// that workers take chunks in turns, so that each worker's sequence of
// chunks differs between the settings, and agreement with sequential Solves
// (to rounding: Estimate updates its factorisations).
func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	data := randomPoints(rng, 300, 1000, 1000, 200)
	values := make([]float64, 300)
	for i := range values {
		values[i] = rng.NormFloat64()
	}
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{120, 80, 4}, [3]float64{8, 12.5, 50}, geostat.Rotation{})
	require.NoError(t, err)
	targets := g.CellCentres(nil)
	nt := len(targets) / 3
	procs := []int{1, 2, 4, 7}
	require.Greater(t, nt, (procs[len(procs)-1]+2)*chunkSize, "more chunks than workers")
	for _, block := range []bool{false, true} {
		p := Params{Variogram: twoStructure(t, 0.1), Method: Ordinary, Search: wide(300, 16)}
		if block {
			p.Discretisation, p.CellSize = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}, g.CellSize
		}
		outs := make([]Output, len(procs))
		stats := make([]Stats, len(procs))
		for i, n := range procs {
			old := runtime.GOMAXPROCS(n)
			k := mustKriger(t, data, values, p)
			outs[i] = allOutputs(nt)
			err := k.Estimate(t.Context(), targets, &outs[i], nil)
			runtime.GOMAXPROCS(old)
			require.NoError(t, err)
			stats[i] = k.Stats()
		}
		for i := 1; i < len(procs); i++ {
			for q := 0; q < nt; q++ {
				require.Equal(t, math.Float64bits(outs[0].Estimate[q]), math.Float64bits(outs[i].Estimate[q]), "%d workers, target %d", procs[i], q)
				require.Equal(t, math.Float64bits(outs[0].Variance[q]), math.Float64bits(outs[i].Variance[q]), "%d workers, target %d", procs[i], q)
				require.Equal(t, math.Float64bits(outs[0].Slope[q]), math.Float64bits(outs[i].Slope[q]), "%d workers, target %d", procs[i], q)
			}
			assert.Equal(t, stats[0], stats[i], "%d workers", procs[i])
		}
		assert.Greater(t, stats[0].Reused, int64(0))
		assert.Greater(t, stats[0].Updated, int64(0))
		// Point estimates equal the weights of Solve applied to the values.
		if !block {
			k := mustKriger(t, data, values, p)
			s := k.NewSolver()
			_, merged := k.Data()
			for q := 0; q < nt; q++ {
				sol, ok := s.Solve(targets[3*q], targets[3*q+1], targets[3*q+2])
				require.True(t, ok)
				e := 0.0
				for a, i := range sol.Neighbors {
					e += sol.Weights[a] * merged[i]
				}
				// Estimate updates factorisations from target to target:
				// the same system up to rounding.
				require.InDelta(t, e, outs[0].Estimate[q], 1e-12, "target %d", q)
				require.InDelta(t, sol.Variance, outs[0].Variance[q], 1e-12, "target %d", q)
			}
		}
	}
}

// TestEstimateProgressAndCancel checks progress reports and cancellation.
func TestEstimateProgressAndCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	data := randomPoints(rng, 100, 100, 100, 100)
	values := make([]float64, 100)
	k := mustKriger(t, data, values, Params{Variogram: spherical(t, 0, 1, 50), Method: Simple, Search: wide(60, 8)})
	targets := randomPoints(rng, 3000, 100, 100, 100)
	out := Output{Estimate: make([]float64, 3000)}
	last := 0
	require.NoError(t, k.Estimate(t.Context(), targets, &out, func(done, total int) {
		assert.Equal(t, 3000, total)
		assert.Greater(t, done, last)
		last = done
	}))
	assert.Equal(t, 3000, last)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := k.Estimate(ctx, targets, &out, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// TestErrors checks that bad input is reported with the field's name.
func TestErrors(t *testing.T) {
	v := twoStructure(t, 0)
	lin := mustVariogram(t, 0, geostat.Structure{Type: geostat.Linear, Contribution: 1, Ellipsoid: iso(10)})
	good := Params{Variogram: v, Search: wide(10, 4)}
	coords := []float64{0, 0, 0, 1, 1, 1}
	cases := []struct {
		name   string
		coords []float64
		values []float64
		mod    func(p *Params)
		want   string
	}{
		{"nil variogram", coords, nil, func(p *Params) { p.Variogram = nil }, "variogram"},
		{"simple linear", coords, nil, func(p *Params) { p.Variogram = lin }, "linear"},
		{"method", coords, nil, func(p *Params) { p.Method = 7 }, "kriging_method"},
		{"mean", coords, nil, func(p *Params) { p.Mean = math.Inf(1) }, "mean"},
		{"max_samples", coords, nil, func(p *Params) { p.Search.MaxSamples = 0 }, "max_samples"},
		{"discretisation", coords, nil, func(p *Params) { p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 0, NZ: 1} }, "ny"},
		{"cell size", coords, nil, func(p *Params) { p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1} }, "cell_size"},
		{"coords length", []float64{0, 0}, nil, func(*Params) {}, "multiple of 3"},
		{"values length", coords, []float64{1}, func(*Params) {}, "values"},
		{"nan coordinate", []float64{0, math.NaN(), 0}, nil, func(*Params) {}, "datum 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := good
			c.mod(&p)
			_, err := New(c.coords, c.values, p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	lp := good
	lp.Variogram, lp.Method = lin, Ordinary
	_, err := New(coords, nil, lp)
	require.NoError(t, err, "ordinary kriging accepts a linear structure")

	k := mustKriger(t, coords, nil, good)
	err = k.Estimate(t.Context(), []float64{0, 0, 0}, &Output{Estimate: make([]float64, 1)}, nil)
	assert.ErrorContains(t, err, "weights-only")
	err = k.Estimate(t.Context(), []float64{0, 0, 0}, &Output{Variance: make([]float64, 2)}, nil)
	assert.ErrorContains(t, err, "Variance")
	err = k.Estimate(t.Context(), []float64{0, 0}, &Output{}, nil)
	assert.ErrorContains(t, err, "targets")
}
