package variogram

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/geostat-engine/geostat/grid"
)

// A linear trend Y = a·i + b·j + c·k has γ̂(h) = (a·p + b·q + c·s)²/2 for
// every lag h = (p, q, s), with (nx − |p|)(ny − |q|)(nz − |s|) pairs.
func TestLatticeLinearTrend(t *testing.T) {
	size := [3]int{10, 8, 3}
	a, b, c := 0.7, -0.3, 1.9
	field := make([]float64, 10*8*3)
	for k := range 3 {
		for j := range 8 {
			for i := range 10 {
				field[i+10*(j+8*k)] = a*float64(i) + b*float64(j) + c*float64(k)
			}
		}
	}
	for _, h := range [][3]int{{1, 0, 0}, {3, 0, 0}, {0, 2, 0}, {0, 0, 1}, {2, -1, 1}, {-4, 3, -2}} {
		g, n := Lattice(field, size, h)
		d := a*float64(h[0]) + b*float64(h[1]) + c*float64(h[2])
		assert.InDelta(t, d*d/2, g, 1e-12*(1+d*d), "lag %v", h)
		assert.Equal(t, (10-abs(h[0]))*(8-abs(h[1]))*(3-abs(h[2])), n, "lag %v", h)
	}
	g, n := Lattice(field, size, [3]int{10, 0, 0})
	assert.Equal(t, 0, n)
	assert.True(t, math.IsNaN(g))
}

// Brute force over all ordered cell pairs of a random field with holes.
func TestLatticeBruteForce(t *testing.T) {
	size := [3]int{7, 5, 4}
	n := 7 * 5 * 4
	rng := rand.New(rand.NewPCG(5, 6))
	field := make([]float64, n)
	for i := range field {
		field[i] = rng.NormFloat64()
		if rng.IntN(5) == 0 {
			field[i] = math.NaN()
		}
	}
	for _, h := range [][3]int{{1, 0, 0}, {0, 1, 1}, {2, -2, 1}, {-1, 3, 0}} {
		sum, pairs := 0.0, 0
		for x := range n {
			i, j, k := x%7, x/7%5, x/35
			i2, j2, k2 := i+h[0], j+h[1], k+h[2]
			if i2 < 0 || i2 >= 7 || j2 < 0 || j2 >= 5 || k2 < 0 || k2 >= 4 {
				continue
			}
			a, b := field[x], field[i2+7*(j2+5*k2)]
			if math.IsNaN(a) || math.IsNaN(b) {
				continue
			}
			sum += (b - a) * (b - a)
			pairs++
		}
		g, np := Lattice(field, size, h)
		assert.Equal(t, pairs, np)
		assert.InDelta(t, sum/float64(2*pairs), g, 1e-12)
	}
}

func TestAxisLags(t *testing.T) {
	g, err := grid.New([3]float64{}, [3]int{40, 30, 6}, [3]float64{5, 10, 2}, geostat.Rotation{})
	require.NoError(t, err)
	// Along x: one cell per step up to the distance limit.
	lags := AxisLags(g, [3]float64{1, 0, 0}, 22, 20)
	assert.Equal(t, [][3]int{{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}, lags)
	// Along z: at most half the grid (3 cells).
	lags = AxisLags(g, [3]float64{0, 0, 1}, 1000, 20)
	assert.Equal(t, [][3]int{{0, 0, 1}, {0, 0, 2}, {0, 0, 3}}, lags)
	// Diagonal (1, 1, 0)/√2 on cells 5 × 10: in cell units (0.2, 0.1)·… so
	// x is dominant and y advances half a cell per step.
	d := 1 / math.Sqrt2
	lags = AxisLags(g, [3]float64{d, d, 0}, 1000, 100)
	require.Len(t, lags, 20) // x reaches half the grid (20 cells) first
	for k, h := range lags[:3] {
		kk := float64(k + 1)
		assert.Equal(t, [3]int{k + 1, int(math.Round(kk * 0.5)), 0}, h)
	}
	// Thinning: more than maxLags lags fit, a constant stride keeps ≤ maxLags.
	lags = AxisLags(g, [3]float64{1, 0, 0}, 1000, 5)
	assert.Equal(t, [][3]int{{4, 0, 0}, {8, 0, 0}, {12, 0, 0}, {16, 0, 0}, {20, 0, 0}}, lags)

	// A rotated grid: the direction of its own first axis is lag (k, 0, 0).
	rot := geostat.Rotation{DipAzimuth: 30, Dip: 20, Pitch: 10}
	gr, err := grid.New([3]float64{}, [3]int{20, 20, 20}, [3]float64{2, 3, 4}, rot)
	require.NoError(t, err)
	step := gr.Step(0)
	l := math.Sqrt(step[0]*step[0] + step[1]*step[1] + step[2]*step[2])
	lags = AxisLags(gr, [3]float64{step[0] / l, step[1] / l, step[2] / l}, 9, 20)
	assert.Equal(t, [][3]int{{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}, lags)
	assert.InDelta(t, 8, LagLength(gr, [3]int{4, 0, 0}), 1e-12)
}
