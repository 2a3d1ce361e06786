package linalg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpdateAgainstFresh deletes rows of an L D Lᵀ factor and appends one
// to three at a time in random sequences (every position, sizes 1..40), and
// checks the factor, 1/D, the carried rows D⁻¹L⁻¹y and D⁻¹L⁻¹1 and the
// vector solved with the appends against a fresh factorisation of the same
// matrix in the same row order, to 1e-10 relative.
func TestUpdateAgainstFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const size = 48
	full, _ := randomSPD(rng, size) // the pool of "data": rows of the global matrix
	yAll := make([]float64, size)
	for i := range yAll {
		yAll[i] = rng.NormFloat64()
	}
	unit := Ones(size)
	// fresh factorises the submatrix of full in the order ord.
	fresh := func(ord []int) ([]float64, []float64, []float64, []float64) {
		n := len(ord)
		a := make([]float64, PackedLen(n))
		for r, i := range ord {
			for c, j := range ord[:r+1] {
				a[RowStart(r)+c] = full[i*size+j]
			}
		}
		inv := make([]float64, n)
		require.True(t, Cholesky(a, n, inv))
		ToLDL(a, inv, n)
		y, u := make([]float64, n), Ones(n)
		for r, i := range ord {
			y[r] = yAll[i]
		}
		for _, v := range [][]float64{y, u} {
			Forward(a, n, unit, v)
			for r := range v {
				v[r] *= inv[r]
			}
		}
		return a, inv, y, u
	}
	m := 40
	pk, bk := make([]float64, size), make([]float64, size)
	for trial := 0; trial < 200; trial++ {
		n0 := 1 + rng.IntN(m)
		ord := rng.Perm(size)[:n0]
		l0, inv0, y0, u0 := fresh(ord)
		l := make([]float64, PackedLen(size))
		inv := make([]float64, size)
		y, u := make([]float64, size), make([]float64, size)
		copy(l, l0)
		copy(inv, inv0)
		copy(y, y0)
		copy(u, u0)
		for step := 0; step < 6; step++ {
			n := len(ord)
			var v, vIn []float64
			if n > 1 && (rng.IntN(2) == 0 || n == m) {
				p := rng.IntN(n)
				DeleteRow(l, inv, n, p, y, u, pk, bk)
				ord = slices.Delete(ord, p, p+1)
			} else {
				// Append 1..3 rows at once, with a right-hand side.
				q := min(1+rng.IntN(3), m-n)
				for a := 0; a < q; a++ {
					j := rng.IntN(size)
					for slices.Contains(ord, j) {
						j = rng.IntN(size)
					}
					ord = append(ord, j)
				}
				yv := make([]float64, q)
				for r := n; r < n+q; r++ {
					row := l[RowStart(r) : RowStart(r)+r+1]
					for c, i := range ord[:r] {
						row[c] = full[ord[r]*size+i]
					}
					row[r] = full[ord[r]*size+ord[r]]
					yv[r-n] = yAll[ord[r]]
				}
				vIn = make([]float64, n+q)
				for r := range vIn {
					vIn[r] = rng.NormFloat64()
				}
				v = slices.Clone(vIn)
				require.True(t, AppendRows(l, inv, unit, n, q, y, yv, u, v, make([][]float64, 0, q+1)))
			}
			n = len(ord)
			want, winv, wy, wu := fresh(ord)
			for e := range want {
				require.InDelta(t, want[e], l[e], 1e-10*math.Max(1, math.Abs(want[e])), "trial %d step %d entry %d", trial, step, e)
			}
			if v != nil {
				Forward(want, n, unit, vIn)
				for r := range vIn {
					require.InDelta(t, vIn[r], v[r], 1e-10*math.Max(1, math.Abs(vIn[r])))
				}
			}
			for r := 0; r < n; r++ {
				require.InDelta(t, winv[r], inv[r], 1e-10*math.Abs(winv[r]))
				require.InDelta(t, wy[r], y[r], 1e-10*math.Max(1, math.Abs(wy[r])))
				require.InDelta(t, wu[r], u[r], 1e-10*math.Max(1, math.Abs(wu[r])))
			}
		}
	}
}

// TestAppendRowsSingular checks that appending a copy of a row is refused.
func TestAppendRowsSingular(t *testing.T) {
	l := []float64{2, 1, 3, 0, 0, 0}
	inv := make([]float64, 3)
	require.True(t, Cholesky(l, 2, inv))
	ToLDL(l, inv, 2)
	// The new datum duplicates datum 0: covariances (2, 1), variance 2.
	l[3], l[4], l[5] = 2, 1, 2
	require.False(t, AppendRows(l, inv, Ones(3), 2, 1, nil, nil, nil, nil, make([][]float64, 0, 2)))
}
