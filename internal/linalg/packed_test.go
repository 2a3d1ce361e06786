package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// randomSPD returns a random symmetric positive definite n × n matrix, flat
// row-major, and the same as a gonum SymDense.
func randomSPD(rng *rand.Rand, n int) ([]float64, *mat.SymDense) {
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	s := mat.NewSymDense(n, nil)
	s.SymOuterK(1, g)
	flat := make([]float64, n*n)
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+float64(n)*0.1)
		for j := 0; j < n; j++ {
			flat[i*n+j] = s.At(i, j)
		}
	}
	return flat, s
}

// packLower returns the lower triangle of the n × n row-major matrix a in
// the packed layout of Cholesky (row i at RowStart(i)).
func packLower(a []float64, n int) []float64 {
	p := make([]float64, 0, PackedLen(n))
	for i := 0; i < n; i++ {
		p = append(p, a[i*n:i*n+i+1]...)
	}
	return p
}

// TestCholeskyAgainstGonum compares the factor and solves with gonum's
// Cholesky for every size 1..40 (covering the paired-row and single-row
// paths and the four-column blocks).
func TestCholeskyAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for n := 1; n <= 40; n++ {
		full, s := randomSPD(rng, n)
		// Only the lower triangle is stored; a NaN past its end must not
		// be read either.
		a := append(packLower(full, n), math.NaN())
		inv := make([]float64, n)
		require.True(t, Cholesky(a, n, inv))
		var c mat.Cholesky
		require.True(t, c.Factorize(s))
		var l mat.TriDense
		c.LTo(&l)
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				require.InDelta(t, l.At(i, j), a[RowStart(i)+j], 1e-10*math.Max(1, math.Abs(l.At(i, j))), "n=%d L[%d][%d]", n, i, j)
			}
			require.InDelta(t, 1/l.At(i, i), inv[i], 1e-10)
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		var want mat.VecDense
		require.NoError(t, c.SolveVecTo(&want, mat.NewVecDense(n, append([]float64(nil), b...))))
		SolveCholesky(a, n, inv, b)
		for i := range b {
			require.InDelta(t, want.AtVec(i), b[i], 1e-9)
		}
	}
}

// TestCholeskyFailures checks that singular, indefinite and NaN matrices
// are reported.
func TestCholeskyFailures(t *testing.T) {
	inv := make([]float64, 3)
	singular := []float64{1, 1, 1, 0.5, 0.5, 1} // rows 0 and 1 equal
	assert.False(t, Cholesky(singular, 3, inv))
	indefinite := []float64{1, 2, 1, 0, 0, 1}
	assert.False(t, Cholesky(indefinite, 3, inv))
	withNaN := []float64{1, math.NaN(), 1, 0, 0, 1}
	assert.False(t, Cholesky(withNaN, 3, inv))
	tiny := []float64{1, 1 - 1e-12, 1} // pivot 2e-12 relative: below the tolerance
	assert.False(t, Cholesky(tiny, 2, inv))
	ok := []float64{1, 1 - 1e-6, 1}
	assert.True(t, Cholesky(ok, 2, inv))
}

// BenchmarkCholesky32 factorises a random 32 × 32 positive definite matrix
// and solves one right-hand side, the size of the kriging benchmark's
// systems.
func BenchmarkCholesky32(b *testing.B) {
	const n = 32
	rng := rand.New(rand.NewPCG(1, 2))
	a, _ := randomSPD(rng, n)
	packed := packLower(a, n)
	l := make([]float64, len(packed))
	inv := make([]float64, n)
	x := make([]float64, n)
	for b.Loop() {
		copy(l, packed)
		if !Cholesky(l, n, inv) {
			b.Fatal("not positive definite")
		}
		for i := range x {
			x[i] = 1
		}
		SolveCholesky(l, n, inv, x)
	}
}
