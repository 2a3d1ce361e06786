package tbsim

import (
	"fmt"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ensembleMoments simulates the field at x0 and x0 + h_j for R realisations
// and returns mean Y(x0), mean Y(x0)², mean Y(x0)·Y(x0+h_j) and the
// ensemble semivariogram mean (Y(x0+h_j) − Y(x0))²/2.
func ensembleMoments(t *testing.T, v *geostat.Variogram, x0 [3]float64, hs [][3]float64, R, L int, seed int64) (m1, m2 float64, cross, semi []float64) {
	pts := append([]float64{}, x0[:]...)
	lo, hi := x0, x0
	for _, h := range hs {
		for a := 0; a < 3; a++ {
			pts = append(pts, x0[a]+h[a])
			lo[a], hi[a] = math.Min(lo[a], x0[a]+h[a]), math.Max(hi[a], x0[a]+h[a])
		}
	}
	f, err := NewField(v, R, L, seed, lo, hi)
	require.NoError(t, err)
	buf := make([]float64, len(pts)/3)
	cross, semi = make([]float64, len(hs)), make([]float64, len(hs))
	for r := 0; r < R; r++ {
		f.Points(r, pts, 7, 0, buf)
		y0 := buf[0]
		m1 += y0
		m2 += y0 * y0
		for j := range hs {
			cross[j] += y0 * buf[j+1]
			d := buf[j+1] - y0
			semi[j] += d * d / 2
		}
	}
	n := float64(R)
	for j := range hs {
		cross[j] /= n
		semi[j] /= n
	}
	return m1 / n, m2 / n, cross, semi
}

// Oracle 12 (docs/math.md 8.2): TB covariances are exact in expectation for
// any number of lines. For every type (unit range, isotropic) at r = 0.25,
// 0.5, 1 and for a rotated anisotropic nested model with a nugget (lags
// along each axis of the ellipsoid), with R = 50000 realisations of L = 20
// lines: mean Y = 0 ± 4/√R, mean Y² = 1 ± 4√(2/R), mean Y(x)Y(x+h) = C(h) ±
// 4√((1 + C²)/R) (Gaussian moments; TB sums of bounded line processes have
// lighter tails, so the bounds are conservative).
func TestEnsembleCovariance(t *testing.T) {
	const R, L = 50000, 20
	type tc struct {
		name string
		v    *geostat.Variogram
		hs   [][3]float64
	}
	iso := [][3]float64{{0.25, 0, 0}, {0, 0.5, 0}, {0.3, 0.4, math.Sqrt(0.75)}}
	var cases []tc
	for _, c := range []struct {
		typ   geostat.StructureType
		alpha int
	}{{geostat.Spherical, 0}, {geostat.Exponential, 0}, {geostat.Gaussian, 0}, {geostat.Cubic, 0},
		{geostat.Spheroidal, 3}, {geostat.Spheroidal, 9}, {geostat.GeneralisedCauchy, 3}, {geostat.GeneralisedCauchy, 7}} {
		v, err := geostat.NewVariogram(0, structure(c.typ, c.alpha, 1, 1, 1, 1, geostat.Rotation{}))
		require.NoError(t, err)
		cases = append(cases, tc{fmt.Sprintf("%v-%d", c.typ, c.alpha), v, iso})
	}
	rot := geostat.Rotation{DipAzimuth: 35, Dip: 25, Pitch: 50}
	aniso, err := geostat.NewVariogram(0.15,
		structure(geostat.Spherical, 0, 0.45, 40, 20, 8, rot),
		structure(geostat.Exponential, 0, 0.4, 80, 50, 16, rot))
	require.NoError(t, err)
	m := rot.Matrix()
	var ah [][3]float64
	for ax, d := range []float64{20, 10, 4} { // half the spherical ranges along each axis
		ah = append(ah, [3]float64{m[ax] * d, m[3+ax] * d, m[6+ax] * d})
	}
	cases = append(cases, tc{"anisotropic", aniso, ah})
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x0 := [3]float64{1000, -500, 20}
			m1, m2, cross, _ := ensembleMoments(t, c.v, x0, c.hs, R, L, int64(100+i))
			assert.InDelta(t, 0, m1, 4/math.Sqrt(R))
			assert.InDelta(t, 1, m2, 4*math.Sqrt(2.0/R))
			for j, h := range c.hs {
				want := c.v.CovarianceLag(h[0], h[1], h[2])
				assert.InDelta(t, want, cross[j], 4*math.Sqrt((1+want*want)/R), "lag %v", h)
			}
		})
	}
}

// The linear (intrinsic) structure: the ensemble semivariogram of the stairs
// process is c·r, within 4·γ·√(2/R) (Gaussian increments). The R = 8000
// realisations are drawn as 8 fields of 1000 to bound the memory of the
// tabulated random walks.
func TestEnsembleLinear(t *testing.T) {
	const batches, R, L = 8, 1000, 25
	rot := geostat.Rotation{DipAzimuth: 60, Dip: 30}
	v, err := geostat.NewVariogram(0, structure(geostat.Linear, 0, 0.7, 50, 25, 10, rot))
	require.NoError(t, err)
	m := rot.Matrix()
	var hs [][3]float64
	for ax, d := range []float64{50, 10, 7} {
		hs = append(hs, [3]float64{m[ax] * d, m[3+ax] * d, m[6+ax] * d})
	}
	hs = append(hs, [3]float64{3, -2, 1})
	semi := make([]float64, len(hs))
	for b := 0; b < batches; b++ {
		_, _, _, s := ensembleMoments(t, v, [3]float64{10, 20, 30}, hs, R, L, int64(77+b))
		for j := range s {
			semi[j] += s[j] / batches
		}
	}
	for j, h := range hs {
		want := v.GammaLag(h[0], h[1], h[2])
		assert.InDelta(t, want, semi[j], 4*want*math.Sqrt(2.0/(batches*R)), "lag %v", h)
	}
}
