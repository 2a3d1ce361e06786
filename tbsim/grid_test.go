package tbsim

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// radialIntegral returns ∫ f(ρ(|h|)) d³h = 4π a³ ∫₀^∞ f(ρ(u)) u² du for an
// isotropic structure of range a (Simpson's rule, to u = 12 for the
// asymptotic types).
func radialIntegral(typ geostat.StructureType, a float64, f func(float64) float64) float64 {
	const n = 24000
	const umax = 12.0
	h := umax / n
	s := 0.0
	for i := 0; i <= n; i++ {
		u := float64(i) * h
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		s += w * f(geostat.Correlation(typ, 0, u)) * u * u
	}
	return 4 * math.Pi * a * a * a * s * h / 3
}

// Oracles 17 and 18 (docs/math.md 8.3) on a 32³ grid (the canonical 64³
// scaled down to keep the test fast; tolerances recomputed for |V| = 32³):
// isotropic models with a = 8 cells, sill 1, L = 500, R = 20 unconditional
// realisations through Run.
//
//   - mean of the 20 realisation means: 0 ± 4√(A/|V|)/√20, A = ∫C;
//   - mean of the 20 realisation variances: 1 − σ̄²(V,V) ± 4√(2∫C²/|V|)/√20,
//     with the bias bounded by A/|V|;
//   - variogram along x, y, z at 2, 4, …, 12 cells: the 20-realisation mean
//     within 4√((3∫C²/|V| + 1/(2L))/20) of the model (an upper bound of
//     Var γ̂ at every lag, docs/math.md 7.3);
//   - pooled excess kurtosis after standardising each realisation: 0 within
//     4√(24∫ρ⁴/(|V|R)) (the delta-method variance of the sample kurtosis of
//     a Gaussian field) plus the TB deficit 1.5/L;
//   - pooled Kolmogorov distance to N(0,1) after standardising: below
//     4√(A/(4|V|R)), a bound of the std of the empirical CDF of correlated
//     values at any z.
func TestGridStatistics(t *testing.T) {
	const n, a, R, L = 32, 8.0, 20, 500
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{n, n, n}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	V := float64(n * n * n)
	for _, typ := range []geostat.StructureType{geostat.Spherical, geostat.Exponential, geostat.Gaussian} {
		t.Run(typ.String(), func(t *testing.T) {
			v, err := geostat.NewVariogram(0, structure(typ, 0, 1, a, a, a, geostat.Rotation{}))
			require.NoError(t, err)
			A := radialIntegral(typ, a, func(c float64) float64 { return c })
			C2 := radialIntegral(typ, a, func(c float64) float64 { return c * c })
			C4 := radialIntegral(typ, a, func(c float64) float64 { return c * c * c * c })
			p := DefaultParams()
			p.Realisations, p.Lines = R, L
			res, err := Run(context.Background(), Input{Grid: g, Variogram: v}, p)
			require.NoError(t, err)
			N := g.NumCells()
			var means, vars []float64
			pooled := make([]float64, 0, N*R)
			m4, m2 := 0.0, 0.0
			for r := 0; r < R; r++ {
				m, s2 := meanVar(res.Block[r*N : (r+1)*N])
				means = append(means, m)
				vars = append(vars, s2)
				sd := math.Sqrt(s2)
				for _, x := range res.Block[r*N : (r+1)*N] {
					z := (x - m) / sd
					pooled = append(pooled, z)
					m2 += z * z
					m4 += z * z * z * z
				}
			}
			mm, _ := meanVar(means)
			mv, _ := meanVar(vars)
			assert.InDelta(t, 0, mm, 4*math.Sqrt(A/V)/math.Sqrt(R), "mean of means")
			assert.InDelta(t, 1, mv, A/V+4*math.Sqrt(2*C2/V)/math.Sqrt(R), "mean of variances")
			kurt := m4/float64(len(pooled))/math.Pow(m2/float64(len(pooled)), 2) - 3
			assert.InDelta(t, 0, kurt, 4*math.Sqrt(24*C4/(V*R))+1.5/L, "excess kurtosis")
			sort.Float64s(pooled)
			ks := 0.0
			for i, z := range pooled {
				f := geostat.NormalCDF(z)
				ks = math.Max(ks, math.Max(math.Abs(f-float64(i)/float64(len(pooled))), math.Abs(f-float64(i+1)/float64(len(pooled)))))
			}
			assert.Less(t, ks, 4*math.Sqrt(A/(4*V*R)), "Kolmogorov distance")

			ev, err := VariogramReproduction(context.Background(), ReproductionInput{Grid: g, Values: res.Block, Realisations: R,
				Variogram: v, Lags: 6, MaxLag: [3]float64{12, 12, 12}})
			require.NoError(t, err)
			tol := 4 * math.Sqrt((3*C2/V+1/(2.0*L))/R)
			for ax := 0; ax < 3; ax++ {
				e := ev[ax]
				require.Len(t, e.Lags, 6)
				for l, lag := range e.Lags {
					require.Equal(t, 2*(l+1), lag[ax], "axis %d lag %d", ax, l)
					assert.InDelta(t, e.Model[l], e.Mean[l], tol, "%s lag %v", e.Axis, lag)
					assert.Equal(t, e.Model[l], e.Regularised[l])
				}
			}
			t.Logf("mean %.4f var %.4f kurt %.4f ks %.4f; γ̄(x) %.3f vs %.3f (tol %.3f)", mm, mv, kurt, ks, ev[0].Mean[2], ev[0].Model[2], tol)
		})
	}
}

// Variogram reproduction on a rotated anisotropic model: along the model
// axes with lattice lags the 20-realisation mean is within 4√((3∫C²/|V| +
// 1/(2L))/20) of the model at the actual lattice lag (∫C² of the anisotropic
// model = major·semi·minor·∫C² of the unit model). A masked grid and block
// values (2×2×1) exercise the regularised model.
func TestVariogramReproductionAnisotropic(t *testing.T) {
	const R, L = 20, 300
	g, err := grid.New([3]float64{0, 0, 0}, [3]int{40, 40, 16}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	mask := make([]bool, g.NumCells())
	for c := range mask {
		i, j, _ := g.IJK(c)
		mask[c] = (i-20)*(i-20)+(j-20)*(j-20) < 20*20
	}
	m, err := grid.NewMasked(g, mask)
	require.NoError(t, err)
	rot := geostat.Rotation{DipAzimuth: 30, Dip: 20}
	v, err := geostat.NewVariogram(0, structure(geostat.Spherical, 0, 1, 12, 8, 4, rot))
	require.NoError(t, err)
	p := DefaultParams()
	p.Realisations, p.Lines = R, L
	p.Discretisation = grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 1}
	p.SaveGaussian = true
	res, err := Run(context.Background(), Input{Masked: m, Variogram: v}, p)
	require.NoError(t, err)
	ev, err := VariogramReproduction(context.Background(), ReproductionInput{Masked: m, Values: res.BlockGaussian, Realisations: R,
		Variogram: v, Discretisation: p.Discretisation, Lags: 5})
	require.NoError(t, err)
	C2 := radialIntegral(geostat.Spherical, 1, func(c float64) float64 { return c * c }) * 12 * 8 * 4
	tol := 4 * math.Sqrt((3*C2/float64(m.NumActive())+1/(2.0*L))/R)
	for ax := 0; ax < 3; ax++ {
		e := ev[ax]
		require.NotEmpty(t, e.Lags)
		for l := range e.Lags {
			assert.Less(t, e.Regularised[l], e.Model[l]+1e-12, "block variogram below the point variogram")
			assert.InDelta(t, e.Regularised[l], e.Mean[l], tol, "%s lag %v", e.Axis, e.Lags[l])
		}
		t.Logf("%s: lags %v γ̄ %.3f model %.3f", e.Axis, e.Lags, e.Mean, e.Regularised)
	}
}
