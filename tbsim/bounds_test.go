package tbsim

import (
	"context"
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineIntervals(t *testing.T) {
	sph, err := geostat.NewVariogram(0, structure(geostat.Spherical, 0, 1, 40, 20, 10, geostat.Rotation{}))
	require.NoError(t, err)
	exp, err := geostat.NewVariogram(0, structure(geostat.Exponential, 0, 1, 40, 20, 10, geostat.Rotation{}))
	require.NoError(t, err)
	box := [3]float64{30, 40, 0} // diagonal 50
	assert.Equal(t, 100*(50.0/10+3), LineIntervals(sph, 100, [3]float64{}, box))
	assert.Zero(t, LineIntervals(exp, 100, [3]float64{}, box), "spectral lines need no table")
	assert.True(t, math.IsInf(LineIntervals(sph, 100, [3]float64{-math.MaxFloat64}, [3]float64{math.MaxFloat64}), 1),
		"a box whose extent overflows")
	assert.True(t, math.IsInf(LineIntervals(sph, 100, [3]float64{}, [3]float64{math.Inf(1)}), 1))

	// The bound holds for the tables the lines actually need: every line's
	// span across the box, in intervals, plus the margins.
	f, err := NewField(sph, 1, 100, 7, [3]float64{}, box)
	require.NoError(t, err)
	ls := f.sets[0]
	corners := f.dom.corners()
	total := 0.0
	for l := range ls.vx {
		tmin, tmax := math.Inf(1), math.Inf(-1)
		for _, c := range corners {
			tt := ls.vx[l]*c[0] + ls.vy[l]*c[1] + ls.vz[l]*c[2] + ls.off[l]
			tmin, tmax = math.Min(tmin, tt), math.Max(tmax, tt)
		}
		total += math.Floor(tmax) - math.Floor(tmin) + 3
	}
	assert.LessOrEqual(t, total, LineIntervals(sph, 100, [3]float64{}, box))
}

// TestDomainTooLongInRangesIsRefused checks that grids and data spanning
// far more variogram ranges than a worker can tabulate are errors before
// anything is allocated: a 1000-cell row of 1e6 m cells (within the grid
// package's bounds) with a 10 m spherical range once asked for tens of GB
// of interval signs, and a grid far from the field's reference point
// indexed its sign tables out of range.
func TestDomainTooLongInRangesIsRefused(t *testing.T) {
	v, err := geostat.NewVariogram(0, structure(geostat.Spherical, 0, 1, 10, 10, 10, geostat.Rotation{}))
	require.NoError(t, err)
	p := DefaultParams()
	p.Lines = 100

	g, err := grid.New([3]float64{}, [3]int{1000, 1, 1}, [3]float64{1e6, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	_, err = Run(context.Background(), Input{Grid: g, Variogram: v}, p)
	require.ErrorContains(t, err, "variogram ranges")

	// A small grid, conditioning data 1e9 away.
	small, err := grid.New([3]float64{}, [3]int{4, 4, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	_, err = Run(context.Background(), Input{Grid: small, Variogram: v, Coords: []float64{1e9, 0, 0}, Values: []float64{1}}, p)
	require.ErrorContains(t, err, "variogram ranges")
	// The same data near the grid simulate.
	_, err = Run(context.Background(), Input{Grid: small, Variogram: v, Coords: []float64{1, 1, 0.5}, Values: []float64{1}}, p)
	require.NoError(t, err)

	// Field.Grid on a grid far from the field's domain.
	f, err := NewField(v, 1, 100, 1, [3]float64{}, [3]float64{4, 4, 1})
	require.NoError(t, err)
	far, err := grid.New([3]float64{1e9, 1e9, 0}, [3]int{4, 4, 1}, [3]float64{1, 1, 1}, geostat.Rotation{})
	require.NoError(t, err)
	out := make([]float64, far.NumCells())
	require.ErrorContains(t, f.Grid(context.Background(), 0, far, out), "variogram ranges")
	require.NoError(t, f.Grid(context.Background(), 0, small, out))
}
