package tbsim

import (
	"math"
	"testing"

	"github.com/geostat-engine/geostat/geostat"
	"github.com/stretchr/testify/require"
)

// The accelerated back-transform equals Distribution.BackTransform bit for
// bit, on tables with ties (plateaus), both tail kinds and NaN.
func TestBackTransformerExact(t *testing.T) {
	z := []float64{0.1, 0.5, 0.5, 0.5, 1, 2, 2, 3.5, 7, 7, 12}
	p := []float64{0.02, 0.1, 0.15, 0.2, 0.3, 0.45, 0.45, 0.6, 0.8, 0.9, 0.97}
	for _, tails := range [][2]geostat.Tail{
		{{}, {}},
		{{Bound: 0, Power: 2}, {Bound: 20, Power: 0.5}},
	} {
		d, err := geostat.NewDistribution(z, p, tails[0], tails[1])
		require.NoError(t, err)
		bt := newBackTransformer(d)
		for i := -20000; i <= 20000; i++ {
			y := float64(i) * 4e-4
			if want, got := d.BackTransform(y), bt.at(y); math.Float64bits(want) != math.Float64bits(got) {
				t.Fatalf("y %v: %v vs %v", y, want, got)
			}
		}
		for j := range p { // exactly at the nodes' scores
			y := geostat.NormalQuantile(p[j])
			require.Equal(t, d.BackTransform(y), bt.at(y))
		}
		require.True(t, math.IsNaN(bt.at(math.NaN())))
		// The batch form equals the single one.
		ys := []float64{-9, -2.5, -0.3, 0, 0.1, 1.7, 4, math.NaN(), math.Inf(1), math.Inf(-1)}
		zs := make([]float64, len(ys))
		bt.transform(zs, ys)
		for i, y := range ys {
			require.Equal(t, math.Float64bits(bt.at(y)), math.Float64bits(zs[i]), "y %v", y)
			require.Equal(t, math.Float64bits(d.BackTransform(y)), math.Float64bits(zs[i]), "y %v", y)
		}
	}
}
