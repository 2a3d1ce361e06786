package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/geostat/variogram"
	"github.com/geostat-engine/geostat/grid"
)

// Oracle 8.1.8: C̄(V, V) of a spherical model (a = 1, sill 1) over a cube of
// side s with n³ sub-points, to the printed digits.
func TestBlockCovarianceOracle(t *testing.T) {
	v, err := geostat.NewVariogram(0, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 1, SemiMajor: 1, Minor: 1}})
	require.NoError(t, err)
	table := []struct {
		side float64
		n    int
		want float64
	}{
		{0.25, 2, 0.79169}, {0.25, 9, 0.75650}, {0.5, 2, 0.59560}, {0.5, 3, 0.55462},
		{0.5, 5, 0.53780}, {1, 3, 0.23730}, {1, 9, 0.21391},
	}
	for _, c := range table {
		g, err := grid.New([3]float64{}, [3]int{4, 4, 4}, [3]float64{c.side, c.side, c.side}, geostat.Rotation{DipAzimuth: 17})
		require.NoError(t, err)
		b := NewBlockAverager(v, g, grid.BlockDiscretisation{NX: c.n, NY: c.n, NZ: c.n})
		assert.InDelta(t, c.want, b.BlockCovariance(), 5e-6, "side %g n %d", c.side, c.n)
	}

	// With a nugget: + c0/n³.
	vn, err := geostat.NewVariogram(0.2, geostat.Structure{Type: geostat.Spherical, Contribution: 1,
		Ellipsoid: geostat.Ellipsoid{Major: 1, SemiMajor: 1, Minor: 1}})
	require.NoError(t, err)
	g, err := grid.New([3]float64{}, [3]int{4, 4, 4}, [3]float64{0.5, 0.5, 0.5}, geostat.Rotation{})
	require.NoError(t, err)
	b := NewBlockAverager(vn, g, grid.BlockDiscretisation{NX: 2, NY: 2, NZ: 2})
	assert.InDelta(t, 0.59560+0.2/8, b.BlockCovariance(), 5e-6)
}

// The regularised variogram equals the point model for a point support,
// reaches C̄(V, V) beyond the range, and agrees with a direct double sum
// over sub-point pairs.
func TestRegularised(t *testing.T) {
	v, err := geostat.NewVariogram(0.1,
		geostat.Structure{Type: geostat.Exponential, Contribution: 0.9,
			Ellipsoid: geostat.Ellipsoid{Major: 40, SemiMajor: 20, Minor: 8, Rotation: geostat.Rotation{DipAzimuth: 30, Dip: 10}}})
	require.NoError(t, err)
	g, err := grid.New([3]float64{}, [3]int{10, 10, 10}, [3]float64{5, 5, 2}, geostat.Rotation{DipAzimuth: 45})
	require.NoError(t, err)
	p := NewBlockAverager(v, g, grid.Point())
	h := variogram.LagVector(g, [3]int{2, -1, 1})
	assert.InDelta(t, v.GammaLag(h[0], h[1], h[2]), p.Regularised(h), 1e-15)

	disc := grid.BlockDiscretisation{NX: 3, NY: 2, NZ: 2}
	b := NewBlockAverager(v, g, disc)
	off := disc.Offsets(g)
	n := disc.Count()
	direct := func(h [3]float64) float64 {
		s := 0.0
		for k := range n {
			for l := range n {
				s += v.GammaLag(off[3*l]+h[0]-off[3*k], off[3*l+1]+h[1]-off[3*k+1], off[3*l+2]+h[2]-off[3*k+2])
			}
		}
		return s / float64(n*n)
	}
	assert.InDelta(t, direct(h)-direct([3]float64{}), b.Regularised(h), 1e-12)
	assert.InDelta(t, v.TotalSill()-direct([3]float64{}), b.BlockCovariance(), 1e-12)
	far := [3]float64{1e5, 0, 0}
	assert.InDelta(t, b.BlockCovariance(), b.Regularised(far), 1e-9)
}

// Integral ranges: the closed forms against a numerical integration of
// 4π ∫ r² ρ(r) dr of each correlation function of package geostat.
func TestIntegralRange(t *testing.T) {
	numeric := func(typ geostat.StructureType, alpha int) float64 {
		// Log-spaced panels from 1e-6 to 1e5 reduced units, Simpson on each.
		sum := 0.0
		edges := []float64{0}
		for e := -6.0; e <= 5; e += 0.01 {
			edges = append(edges, math.Pow(10, e))
		}
		for i := 1; i < len(edges); i++ {
			sum += simpson(func(r float64) float64 { return r * r * geostat.Correlation(typ, alpha, r) }, edges[i-1], edges[i], 8)
		}
		// Power-law tail beyond R = 1e5 for the heavy-tailed types:
		// ρ ≈ C·r^(−α) ⇒ ∫_R^∞ r² ρ = C R^(3−α)/(α − 3).
		if typ == geostat.Spheroidal || typ == geostat.GeneralisedCauchy {
			R := edges[len(edges)-1]
			c := geostat.Correlation(typ, alpha, R) * math.Pow(R, float64(alpha))
			sum += c * math.Pow(R, 3-float64(alpha)) / float64(alpha-3)
		}
		return 4 * math.Pi * sum
	}
	cases := []struct {
		typ   geostat.StructureType
		alpha int
	}{
		{geostat.Spherical, 0}, {geostat.Exponential, 0}, {geostat.Gaussian, 0}, {geostat.Cubic, 0},
		{geostat.Spheroidal, 5}, {geostat.Spheroidal, 7}, {geostat.Spheroidal, 9},
		{geostat.GeneralisedCauchy, 5}, {geostat.GeneralisedCauchy, 7}, {geostat.GeneralisedCauchy, 9},
	}
	for _, c := range cases {
		k, ok := unitIntegralRange(c.typ, c.alpha)
		require.True(t, ok)
		assert.InEpsilon(t, numeric(c.typ, c.alpha), k, 1e-6, "%v α=%d", c.typ, c.alpha)
	}
	_, ok := unitIntegralRange(geostat.Spheroidal, 3)
	assert.False(t, ok)
	_, ok = unitIntegralRange(geostat.Linear, 0)
	assert.False(t, ok)

	// A two-structure anisotropic model: Σ c·K·abc.
	v, err := geostat.NewVariogram(0.1,
		geostat.Structure{Type: geostat.Spherical, Contribution: 0.5, Ellipsoid: geostat.Ellipsoid{Major: 10, SemiMajor: 5, Minor: 2}},
		geostat.Structure{Type: geostat.Exponential, Contribution: 0.4, Ellipsoid: geostat.Ellipsoid{Major: 30, SemiMajor: 30, Minor: 3}})
	require.NoError(t, err)
	a, ok := IntegralRange(v)
	require.True(t, ok)
	assert.InDelta(t, 0.5*math.Pi/6*100+0.4*8*math.Pi/27*2700, a, 1e-9)
}
