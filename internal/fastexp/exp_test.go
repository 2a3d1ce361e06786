package fastexp

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The table entries are 2^(j/64) correctly rounded: products of the square
// roots 2^(2^-b) computed with 256-bit big.Float arithmetic.
func TestExpTable(t *testing.T) {
	const prec = 256
	roots := make([]*big.Float, 7) // roots[b] = 2^(2^-b)
	r := new(big.Float).SetPrec(prec).SetInt64(2)
	for b := 0; b < 7; b++ {
		roots[b] = new(big.Float).SetPrec(prec).Set(r)
		r = new(big.Float).SetPrec(prec).Sqrt(r)
	}
	for j := 0; j < 64; j++ {
		v := new(big.Float).SetPrec(prec).SetInt64(1)
		for b := 1; b <= 6; b++ {
			if j&(64>>b) != 0 {
				v.Mul(v, roots[b])
			}
		}
		want, _ := v.Float64()
		require.Equal(t, want, exp2Sixtyfourths[j], "2^(%d/64)", j)
	}
}

// ulps returns the distance between a and b in units in the last place of b.
func ulps(a, b float64) float64 {
	return math.Abs(a-b) / (math.Nextafter(b, math.Inf(1)) - b)
}

// Exp agrees with math.Exp to 2 ulp (each is within 1–2 ulp of e^x) over
// the correlation range and the whole finite range, is exactly 1 at 0, and
// hands the edges to math.Exp.
func TestExpAccuracy(t *testing.T) {
	assert.Equal(t, 1.0, Exp(0))
	assert.Equal(t, 1.0, Exp(math.Copysign(0, -1)))
	worst := 0.0
	check := func(x float64) {
		u := ulps(Exp(x), math.Exp(x))
		worst = max(worst, u)
		require.LessOrEqual(t, u, 2.0, "x=%v: Exp %v, math.Exp %v", x, Exp(x), math.Exp(x))
	}
	for i := 0; i <= 200000; i++ {
		check(-30 * float64(i) / 200000) // exp(−3r), exp(−3r²) for r up to √10
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		check(-708 + 1417*rng.Float64())
	}
	t.Logf("largest difference from math.Exp: %.2f ulp", worst)
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 710, -710, -745, 709.5, -708.5} {
		got, want := Exp(x), math.Exp(x)
		if math.IsNaN(want) {
			assert.True(t, math.IsNaN(got))
			continue
		}
		assert.Equal(t, want, got, "x=%v", x)
	}
	// Monotone across a table step (no jump at the reduction's seams).
	for x := -1.0; x < 0; x += 1.0 / 4096 {
		require.LessOrEqual(t, Exp(x), Exp(math.Nextafter(x+1.0/4096, 0)))
	}
}

func BenchmarkExp(b *testing.B) {
	x := make([]float64, 1024)
	for i := range x {
		x[i] = -6 * float64(i) / 1024
	}
	b.Run("fastexp", func(b *testing.B) {
		s := 0.0
		for b.Loop() {
			for _, v := range x {
				s += Exp(v)
			}
		}
		_ = s
	})
	b.Run("fastexp-slice", func(b *testing.B) {
		y := make([]float64, len(x))
		s := 0.0
		for b.Loop() {
			copy(y, x)
			Slice(y)
			s += y[0]
		}
		_ = s
	})
	b.Run("math", func(b *testing.B) {
		s := 0.0
		for b.Loop() {
			for _, v := range x {
				s += math.Exp(v)
			}
		}
		_ = s
	})
}
