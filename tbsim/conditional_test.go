package tbsim

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sort"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/geostat-engine/geostat/kriging"
	"github.com/geostat-engine/geostat/neighbor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneCell is a 1×1×1 grid of the given cell size centred on c.
func oneCell(t *testing.T, c [3]float64, size float64) *grid.Grid {
	g, err := grid.New([3]float64{c[0] - size/2, c[1] - size/2, c[2] - size/2}, [3]int{1, 1, 1}, [3]float64{size, size, size}, geostat.Rotation{})
	require.NoError(t, err)
	return g
}

// ensembleAt runs batches of 100 realisations with different seeds and
// returns the pooled Gaussian block values of cell 0.
func ensembleAt(t *testing.T, in Input, p Params, batches int) []float64 {
	var out []float64
	p.Realisations = 100
	p.SaveGaussian = true
	for b := 0; b < batches; b++ {
		p.Seed = int64(1000 + b)
		res, err := Run(context.Background(), in, p)
		require.NoError(t, err)
		out = append(out, res.BlockGaussian...)
	}
	return out
}

func meanVar(x []float64) (float64, float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, s / float64(len(x)-1)
}

// Oracle 15 (docs/math.md 8.2): with a unique neighbourhood and c0 = 0 the
// ensemble mean and variance of conditional realisations are the kriging
// estimate and variance, within 4σ for R = 4000: mean ± 4√(σ²/R), variance
// ± 4σ²√(2/R). Spherical a = 10, sill 1.
func TestConditionalMoments(t *testing.T) {
	v, err := geostat.NewVariogram(0, structure(geostat.Spherical, 0, 1, 10, 10, 10, geostat.Rotation{}))
	require.NoError(t, err)
	unique := &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 1000, SemiMajor: 1000, Minor: 1000}, MaxSamples: 10}
	const batches = 40
	const R = 100 * batches
	y1, y2 := 0.8, -0.3
	cases := []struct {
		name     string
		method   kriging.Method
		coords   []float64
		values   []float64
		mean, vr float64
	}{
		{"SK one datum", kriging.Simple, []float64{5, 0, 0}, []float64{1}, 0.3125, 0.90234375},
		{"OK one datum", kriging.Ordinary, []float64{5, 0, 0}, []float64{1}, 1, 1.375},
		{"SK two data", kriging.Simple, []float64{-2, 0, 0, 2, 0, 0}, []float64{y1, y2}, 0.4916201 * (y1 + y2), 0.3077989},
		{"OK two data", kriging.Ordinary, []float64{-2, 0, 0, 2, 0, 0}, []float64{y1, y2}, 0.5 * (y1 + y2), 0.308},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Lines = 100
			p.Method = c.method
			p.Search = unique
			in := Input{Grid: oneCell(t, [3]float64{0, 0, 0}, 1e-3), Coords: c.coords, Values: c.values, Variogram: v}
			ys := ensembleAt(t, in, p, batches)
			m, s2 := meanVar(ys)
			t.Logf("mean %.4f (want %.4f ± %.4f), variance %.4f (want %.4f ± %.4f)", m, c.mean, 4*math.Sqrt(c.vr/R), s2, c.vr, 4*c.vr*math.Sqrt(2.0/R))
			assert.InDelta(t, c.mean, m, 4*math.Sqrt(c.vr/R), "mean")
			assert.InDelta(t, c.vr, s2, 4*c.vr*math.Sqrt(2.0/R), "variance")
		})
	}
}

// dataAtCentres puts a datum of value value(c) at the centre of every
// step-th cell c of g from first on, and returns the data and their cells.
func dataAtCentres(g *grid.Grid, first, step int, value func(c int) float64) (coords, values []float64, cells []int) {
	for c := first; c < g.NumCells(); c += step {
		i, j, k := g.IJK(c)
		p := g.CellCentre(i, j, k)
		coords = append(coords, p[:]...)
		values = append(values, value(c))
		cells = append(cells, c)
	}
	return coords, values, cells
}

// Data are honoured exactly by simple kriging without nugget: cells whose
// centres are data equal the datum in every realisation (Gaussian: 1e-9;
// data units through the distribution round trip: 1e-9·(|z|+1)), with a
// moving neighbourhood and block discretisation 1.
func TestDataHonoured(t *testing.T) {
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{12, 9, 4}, [3]float64{10, 10, 5}, geostat.Rotation{DipAzimuth: 15})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0,
		structure(geostat.Spherical, 0, 0.6, 60, 40, 15, geostat.Rotation{DipAzimuth: 15}),
		structure(geostat.Gaussian, 0, 0.4, 90, 90, 30, geostat.Rotation{}))
	require.NoError(t, err)
	coords, values, cells := dataAtCentres(g, 3, 17, func(c int) float64 { return 1 + math.Exp(math.Cos(float64(c))) })
	z, pr, err := geostat.ScoreTable(values, nil)
	require.NoError(t, err)
	d, err := geostat.NewDistribution(z, pr, geostat.Tail{Bound: 0, Power: 1}, geostat.Tail{Bound: 10, Power: 1})
	require.NoError(t, err)
	for _, dist := range []*geostat.Distribution{nil, d} {
		p := DefaultParams()
		p.Realisations = 5
		p.Lines = 200
		p.SaveGaussian = true
		p.Search = &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 80, SemiMajor: 80, Minor: 30}, MaxSamples: 8}
		res, err := Run(context.Background(), Input{Grid: g, Coords: coords, Values: values, Variogram: v, Distribution: dist}, p)
		require.NoError(t, err)
		n := g.NumCells()
		for q, c := range cells {
			want := values[q]
			if dist != nil {
				want = d.NormalScore(values[q])
			}
			for r := 0; r < p.Realisations; r++ {
				require.InDelta(t, want, res.BlockGaussian[c+r*n], 1e-9)
				require.InDelta(t, values[q], res.Block[c+r*n], 1e-9*(math.Abs(values[q])+1), "dist %v", dist != nil)
			}
		}
	}
}

// Oracle 16 (docs/math.md 8.2): Gaussian block averages (cube of side 0.5,
// 2×2×2 sub-points, spherical a = 1) of unconditional realisations have the
// ensemble variance C̄(V,V) = 0.59560 (plus c0/8 with a nugget), within
// 4·C̄·√(2/R) for R = 4000, and mean 0 ± 4√(C̄/R).
func TestBlockVariance(t *testing.T) {
	const batches = 40
	const R = 100 * batches
	for _, c0 := range []float64{0, 0.2} {
		v, err := geostat.NewVariogram(c0, structure(geostat.Spherical, 0, 1-c0, 1, 1, 1, geostat.Rotation{}))
		require.NoError(t, err)
		want := (1-c0)*0.59560 + c0/8
		p := DefaultParams()
		p.Lines = 100
		p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2}
		ys := ensembleAt(t, Input{Grid: oneCell(t, [3]float64{3, 4, 5}, 0.5), Variogram: v}, p, batches)
		m, s2 := meanVar(ys)
		t.Logf("c0 %g: mean %.4f variance %.4f (want %.5f)", c0, m, s2, want)
		assert.InDelta(t, 0, m, 4*math.Sqrt(want/R), "c0 %g mean", c0)
		assert.InDelta(t, want, s2, 4*want*math.Sqrt(2.0/R)+5e-6, "c0 %g variance", c0)
	}
}

// The back-transformed values reproduce the distribution: on a grid whose
// spacing exceeds the range (nearly independent cells) the pooled values of
// unconditional realisations have the distribution's CDF within a
// Kolmogorov distance of 2/√n (n = cells × realisations; the 99.9 % point of
// the Kolmogorov statistic is 1.95/√n), and its mean.
func TestHistogramReproduction(t *testing.T) {
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{40, 40, 10}, [3]float64{2, 2, 2}, geostat.Rotation{})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0.1, structure(geostat.Spherical, 0, 0.9, 1, 1, 1, geostat.Rotation{}))
	require.NoError(t, err)
	// A skewed (lognormal) table with power tails.
	var z, pr []float64
	for i := 1; i < 50; i++ {
		p := float64(i) / 50
		z = append(z, math.Exp(geostat.NormalQuantile(p)))
		pr = append(pr, p)
	}
	d, err := geostat.NewDistribution(z, pr, geostat.Tail{Bound: 0, Power: 1}, geostat.Tail{Bound: 20, Power: 0.5})
	require.NoError(t, err)
	p := DefaultParams()
	p.Realisations = 5
	res, err := Run(context.Background(), Input{Grid: g, Variogram: v, Distribution: d}, p)
	require.NoError(t, err)
	vals := append([]float64(nil), res.Block...)
	sort.Float64s(vals)
	n := float64(len(vals))
	ks := 0.0
	for i, x := range vals {
		f := d.CDF(x)
		ks = math.Max(ks, math.Max(math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n)))
	}
	t.Logf("KS %.4f (limit %.4f)", ks, 2/math.Sqrt(n))
	assert.Less(t, ks, 2/math.Sqrt(n))
	// Mean of the distribution by quadrature of its quantile function.
	mean := 0.0
	const nq = 200000
	for i := 0; i < nq; i++ {
		mean += d.Quantile((float64(i) + 0.5) / nq)
	}
	mean /= nq
	m, s2 := meanVar(vals)
	assert.InDelta(t, mean, m, 4*math.Sqrt(s2/n))
}

// A different seed changes every realisation.
func TestSeedChangesEveryRealisation(t *testing.T) {
	in, p := smallCase(t)
	a, err := Run(context.Background(), in, p)
	require.NoError(t, err)
	p.Seed++
	b, err := Run(context.Background(), in, p)
	require.NoError(t, err)
	n := a.Cells
	for r := 0; r < p.Realisations; r++ {
		same, cmp := 0, 0
		for c := 0; c < n; c++ {
			x, y := a.Block[c+r*n], b.Block[c+r*n]
			if math.IsNaN(x) {
				continue
			}
			cmp++
			if x == y {
				same++
			}
		}
		require.Greater(t, cmp, 0)
		assert.Less(t, float64(same), 0.01*float64(cmp), "realisation %d", r)
	}
}

// Cancellation stops the simulation within one tile: after the context is
// cancelled (from the first progress report), every worker finishes at most
// the tile it is computing; the tiles already dispatched but not started are
// skipped. The error wraps context.Canceled.
func TestCancellation(t *testing.T) {
	in, p := smallCase(t)
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		ctx, cancel := context.WithCancel(context.Background())
		p.TileRows = 1
		reports := 0
		p.Progress = func(done, total int) {
			reports++
			cancel()
		}
		s, err := prepare(ctx, in, p, nil)
		require.NoError(t, err)
		delivered := 0
		st, err := s.execute(ctx, func(Tile) error { delivered++; return nil })
		runtime.GOMAXPROCS(old)
		require.Error(t, err)
		require.True(t, errors.Is(err, context.Canceled))
		// Tiles computed: the first (reported), those finished but not yet
		// delivered when it was reported (≤ window − 1 = 2·procs − 1) and one
		// in progress per worker.
		assert.LessOrEqual(t, st.Tiles, 1+(2*procs-1)+procs, "procs %d", procs)
		assert.Less(t, st.Tiles, len(s.tiles)/4)
		assert.Equal(t, reports, delivered)
		cancel()
	}
}

// A sink error stops the simulation and is returned.
func TestSinkError(t *testing.T) {
	in, p := smallCase(t)
	boom := errors.New("disk full")
	calls := 0
	_, err := Stream(context.Background(), in, p, func(Tile) error {
		calls++
		if calls == 2 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, 2, calls)
}

// Stream delivers tiles in increasing cell order whose values equal Run's.
func TestStreamMatchesRun(t *testing.T) {
	in, p := smallCase(t)
	ref, err := Run(context.Background(), in, p)
	require.NoError(t, err)
	next := 0
	_, err = Stream(context.Background(), in, p, func(tl Tile) error {
		require.Equal(t, next, tl.Lo)
		m := tl.Hi - tl.Lo
		for r := 0; r < p.Realisations; r++ {
			for c := tl.Lo; c < tl.Hi; c++ {
				a, b := ref.PointGaussian[c+r*ref.Cells], tl.PointGaussian[c-tl.Lo+r*m]
				require.True(t, a == b || math.IsNaN(a) && math.IsNaN(b))
			}
		}
		next = tl.Hi
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, ref.Cells, next)
}

// Validation errors name the API's fields.
func TestValidation(t *testing.T) {
	in, _ := smallCase(t)
	cases := []struct {
		edit func(*Params, *Input)
		msg  string
	}{
		{func(p *Params, _ *Input) { p.Realisations = 0 }, "realizations"},
		{func(p *Params, _ *Input) { p.Realisations = 101 }, "realizations"},
		{func(p *Params, _ *Input) { p.Lines = 1001 }, "number_of_lines"},
		{func(p *Params, _ *Input) { p.Discretisation.NY = 10 }, "block_discretization.ny"},
		{func(p *Params, _ *Input) { p.Search = &neighbor.Params{MaxSamples: 0} }, "neighborhood"},
		{func(_ *Params, in *Input) { in.Variogram = nil }, "variogram_model"},
		{func(_ *Params, in *Input) { in.Filter = []bool{true} }, "filter"},
		{func(_ *Params, in *Input) { in.Values = in.Values[:3] }, "source_attribute"},
		{func(p *Params, in *Input) {
			v, _ := geostat.NewVariogram(0, structure(geostat.Linear, 0, 1, 10, 10, 10, geostat.Rotation{}))
			in.Variogram = v
			p.Method = kriging.Simple
		}, "kriging_method"},
	}
	for _, c := range cases {
		p := DefaultParams()
		in2 := in
		c.edit(&p, &in2)
		_, err := Run(context.Background(), in2, p)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.msg)
	}
}

// A linear structure is simulated with ordinary kriging: data at cell
// centres are honoured in every realisation (1e-9; no nugget, so kriging
// is exact there, and no distribution, so the values are the Gaussian
// values), the run warns that the values are not N(0,1), and it is
// reproducible: bit-identical ensembles for GOMAXPROCS 1 and 2.
func TestLinearWithOrdinaryKriging(t *testing.T) {
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{12, 9, 4}, [3]float64{10, 10, 5}, geostat.Rotation{DipAzimuth: 15})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0, structure(geostat.Linear, 0, 1, 50, 50, 20, geostat.Rotation{}),
		structure(geostat.Spherical, 0, 0.5, 40, 40, 20, geostat.Rotation{}))
	require.NoError(t, err)
	coords, values, cells := dataAtCentres(g, 5, 19, func(c int) float64 { return math.Sin(float64(c)) })
	p := DefaultParams()
	p.Method = kriging.Ordinary
	p.Realisations = 4
	p.Lines = 100
	p.Search = &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 80, SemiMajor: 80, Minor: 30}, MaxSamples: 8}
	in := Input{Grid: g, Coords: coords, Values: values, Variogram: v}
	var runs [2]*Result
	for i, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		res, err := Run(context.Background(), in, p)
		runtime.GOMAXPROCS(old)
		require.NoError(t, err)
		runs[i] = res
	}
	res := runs[0]
	assert.Contains(t, res.Warnings, "the variogram has a linear (intrinsic) structure: Gaussian values are not N(0,1) marginally")
	n := g.NumCells()
	for q, c := range cells {
		for r := 0; r < p.Realisations; r++ {
			require.InDelta(t, values[q], res.Block[c+r*n], 1e-9, "datum %d realisation %d", q, r)
		}
	}
	require.Len(t, runs[1].Block, len(res.Block))
	for i, x := range res.Block {
		require.False(t, math.IsInf(x, 0) || math.IsNaN(x), "cell value %d", i)
		require.Equal(t, math.Float64bits(x), math.Float64bits(runs[1].Block[i]), "cell value %d", i)
	}
}

// Progress reports increase to the number of target cells.
func TestProgress(t *testing.T) {
	in, p := smallCase(t)
	last, calls, total := 0, 0, 0
	p.Progress = func(done, tot int) {
		require.Greater(t, done, last)
		last, total = done, tot
		calls++
	}
	res, err := Run(context.Background(), in, p)
	require.NoError(t, err)
	assert.Equal(t, res.Cells, total)
	assert.Equal(t, total, last)
	assert.Equal(t, res.Stats.Tiles, calls)
}

// Cells with fewer neighbours than MinSamples stay unconditioned: with a
// small search ellipsoid around two data, far cells are draws from the prior
// (finite values, counted in Stats.Unconditioned), near cells are conditioned.
func TestUnconditionedCells(t *testing.T) {
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{30, 30, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	v, err := geostat.NewVariogram(0, structure(geostat.Spherical, 0, 1, 10, 10, 10, geostat.Rotation{}))
	require.NoError(t, err)
	p := DefaultParams()
	p.Realisations = 2
	p.Search = &neighbor.Params{Ellipsoid: geostat.Ellipsoid{Major: 3, SemiMajor: 3, Minor: 3}, MaxSamples: 4, MinSamples: 2}
	in := Input{Grid: g, Coords: []float64{5.5, 5.5, 0.5, 6.5, 5.5, 0.5}, Values: []float64{2, 2}, Variogram: v}
	res, err := Run(context.Background(), in, p)
	require.NoError(t, err)
	assert.Greater(t, res.Stats.Unconditioned, 800)
	assert.Less(t, res.Stats.Unconditioned, res.Stats.Simulated)
	assert.Equal(t, 900, res.Stats.Simulated)
	for r := 0; r < 2; r++ {
		assert.InDelta(t, 2, res.Block[g.Index(5, 5, 0)+r*900], 1e-9)
	}
	for _, x := range res.Block {
		require.False(t, math.IsNaN(x))
	}
}
