package variogram

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// span returns exactly the lags whose windows contain h, for disjoint,
// touching and overlapping windows, at random distances and on every
// window edge.
func TestLagSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, c := range []struct{ d, tol float64 }{{10, 5}, {10, 3}, {10, 7.5}, {0.3, 0.15}, {0.3, 0.7}, {7, 3.5}} {
		l := newLagSet(c.d, c.tol, 12)
		var hs []float64
		for range 20000 {
			hs = append(hs, rng.Float64()*l.maxDist)
		}
		for k := 0; k <= 12; k++ {
			hs = append(hs, float64(k)*c.d-c.tol, float64(k)*c.d+c.tol, float64(k)*c.d)
		}
		for _, h := range hs {
			if h <= 0 || h > l.maxDist {
				continue
			}
			lo, hi := l.span(h)
			for k := 0; k <= 12; k++ {
				require.Equal(t, l.in(k, h), k >= lo && k <= hi, "d %g tol %g h %v lag %d", c.d, c.tol, h, k)
			}
		}
	}
}
