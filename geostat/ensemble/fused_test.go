package ensemble

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fused passes give exactly (bit for bit) what the separate passes
// give: every length modulo 4, ties at the cutoffs, ±0 among the extremes.
func TestFusedPassesBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for n := 1; n <= 41; n++ {
		for rep := range 20 {
			v := make([]float64, n)
			for i := range v {
				switch rng.IntN(5) {
				case 0:
					v[i] = float64(rng.IntN(3)) // ties at the cutoffs 1 and 2
				case 1:
					v[i] = math.Copysign(0, rng.Float64()-0.5)
				default:
					v[i] = rng.NormFloat64() * 3
				}
				if rep%4 == 3 { // no sign bit set: sumMinMax's fast path
					v[i] = math.Abs(v[i])
				}
			}
			total, lo, hi := sumMinMax(v)
			require.Equal(t, math.Float64bits(sum(v)), math.Float64bits(total), "n=%d rep %d sum", n, rep)
			// The scan of the previous code, written out.
			wlo, whi := v[0], v[0]
			for _, x := range v {
				if x < wlo {
					wlo = x
				}
				if x > whi {
					whi = x
				}
			}
			require.Equal(t, math.Float64bits(wlo), math.Float64bits(lo), "n=%d rep %d min", n, rep)
			require.Equal(t, math.Float64bits(whi), math.Float64bits(hi), "n=%d rep %d max", n, rep)
			c, d := 1.0, 2.0
			if rep%2 == 1 {
				c, d = d, -0.5
			}
			nc, tc, nd, td := countAbove2(v, c, d)
			wnc, wtc := countAbove(v, c)
			wnd, wtd := countAbove(v, d)
			require.Equal(t, wnc, nc)
			require.Equal(t, wnd, nd)
			require.Equal(t, math.Float64bits(wtc), math.Float64bits(tc), "n=%d rep %d sum above %v", n, rep, c)
			require.Equal(t, math.Float64bits(wtd), math.Float64bits(td), "n=%d rep %d sum above %v", n, rep, d)
		}
	}
}
