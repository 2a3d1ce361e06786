// Package linalg is the dense linear algebra of kriging: symmetric
// positive definite systems stored as packed lower triangles, their
// Cholesky factorisation and substitutions, and the L D Lᵀ form with row
// deletions and appends that lets a factorisation follow a moving
// neighbourhood (ldl.go).
//
// Matrices and factors are stored packed: the lower triangle row by row,
// row i (columns 0..i) at offset RowStart(i) = i(i+1)/2, so that an n × n
// system takes n(n+1)/2 floats and every row prefix is contiguous. The
// kernels are plain loops over []float64 with fixed summation orders
// (results depend on the inputs only), unrolled so that the compiler keeps
// several partial sums in registers.
package linalg

import "math"

// PivotTolerance is the relative size below which a Cholesky pivot counts as
// zero: the factorisation fails when the Schur complement of a diagonal entry
// falls to PivotTolerance times that entry or less, i.e. when a datum is
// predictable from the others with a relative error variance of 1e-10 or less
// (near-duplicate data, dense data under a Gaussian model without nugget).
// The caller then regularises (package kriging adds a ridge).
const PivotTolerance = 1e-10

// RowStart returns the offset of row i in packed lower-triangular storage.
// (i(i+1) is never negative, so the shift is the division without the
// sign fix-up a signed /2 compiles to.)
func RowStart(i int) int { return i * (i + 1) >> 1 }

// PackedLen returns the length of an n × n packed lower triangle.
func PackedLen(n int) int { return n * (n + 1) >> 1 }

// Cholesky factorises the symmetric positive definite n × n matrix held in a
// (packed lower triangle, see RowStart) in place as a = L·Lᵀ, leaving L in a
// and 1/L_jj in invDiag. It returns false, leaving a partly overwritten, when
// a pivot is not larger than PivotTolerance times its original diagonal entry
// (or is NaN).
//
// This is the row-oriented (Cholesky–Banachiewicz) form: every inner product
// runs over two contiguous row prefixes of L, and row i of L depends on rows
// 0..i of a only. Rows are taken in pairs (i, i+1) and columns in blocks of
// four (j..j+3): entry (r, c) of a block is a[r][c] minus the inner product
// over the block's common prefix k < j, summed in increasing k, minus the
// terms of the block's own small triangle, in increasing k. The inner
// products of a block are computed two columns at a time (four sums per
// pass, which the compiler keeps in registers).
func Cholesky(a []float64, n int, invDiag []float64) bool {
	a = a[:PackedLen(n)]
	invDiag = invDiag[:n]
	i := 0
	for ; i+2 <= n; i += 2 {
		oi := RowStart(i)
		ri := a[oi : oi+i+1]
		rk := a[oi+i+1 : oi+2*i+3]
		j := 0
		for ; j+4 <= i; j += 4 {
			// Rows j..j+3 are contiguous: lengths j+1, j+2, j+3, j+4.
			blk := a[RowStart(j) : RowStart(j)+4*j+10]
			r0 := blk[:j]
			r1 := blk[j+1 : 2*j+2]
			r2 := blk[2*j+3 : 3*j+5]
			r3 := blk[3*j+6 : 4*j+10]
			x, y := ri[:j], rk[:j]
			s0, t0, s1, t1 := dot2x2(x, y, r0, r1[:j])
			s2, t2, s3, t3 := dot2x2(x, y, r2[:j], r3[:j])
			// The 4 × 4 triangle of rows j..j+3, through fixed-size
			// views (no bounds checks on constant indices).
			u1 := r1[j]
			u2 := (*[2]float64)(r2[j:])
			u3 := (*[3]float64)(r3[j:])
			d := (*[4]float64)(invDiag[j : j+4])
			bi := (*[4]float64)(ri[j : j+4])
			bk := (*[4]float64)(rk[j : j+4])
			l0 := (bi[0] - s0) * d[0]
			l1 := (bi[1] - s1 - l0*u1) * d[1]
			l2 := (bi[2] - s2 - l0*u2[0] - l1*u2[1]) * d[2]
			l3 := (bi[3] - s3 - l0*u3[0] - l1*u3[1] - l2*u3[2]) * d[3]
			bi[0], bi[1], bi[2], bi[3] = l0, l1, l2, l3
			m0 := (bk[0] - t0) * d[0]
			m1 := (bk[1] - t1 - m0*u1) * d[1]
			m2 := (bk[2] - t2 - m0*u2[0] - m1*u2[1]) * d[2]
			m3 := (bk[3] - t3 - m0*u3[0] - m1*u3[1] - m2*u3[2]) * d[3]
			bk[0], bk[1], bk[2], bk[3] = m0, m1, m2, m3
		}
		if j < i { // i is even, so two columns remain
			blk := a[RowStart(j) : RowStart(j)+2*j+3]
			r0 := blk[:j]
			r1 := blk[j+1 : 2*j+3]
			s0, t0, s1, t1 := dot2x2(ri[:j], rk[:j], r0, r1[:j])
			u1 := r1[j]
			d0, d1 := invDiag[j], invDiag[j+1]
			l0 := (ri[j] - s0) * d0
			ri[j], ri[j+1] = l0, (ri[j+1]-s1-l0*u1)*d1
			m0 := (rk[j] - t0) * d0
			rk[j], rk[j+1] = m0, (rk[j+1]-t1-m0*u1)*d1
		}
		// The 2 × 2 diagonal block: the three inner products in one pass.
		var sii, ski, skk float64
		x := ri[:i]
		y := rk[:i]
		for k, v := range x {
			w := y[k]
			sii += v * v
			ski += w * v
			skk += w * w
		}
		orig := ri[i]
		d := orig - sii
		if !(d > PivotTolerance*math.Abs(orig)) {
			return false
		}
		l := math.Sqrt(d)
		inv := 1 / l
		ri[i] = l
		invDiag[i] = inv
		rk = rk[:i+2]
		lki := (rk[i] - ski) * inv
		rk[i] = lki
		orig = rk[i+1]
		d = orig - skk - lki*lki
		if !(d > PivotTolerance*math.Abs(orig)) {
			return false
		}
		l = math.Sqrt(d)
		rk[i+1] = l
		invDiag[i+1] = 1 / l
	}
	if i < n { // the last row of an odd n
		oi := RowStart(i)
		ri := a[oi : oi+i+1]
		for j := 0; j < i; j++ {
			oj := RowStart(j)
			ri[j] = (ri[j] - Dot(ri[:j], a[oj:oj+j])) * invDiag[j]
		}
		orig := ri[i]
		d := orig - Dot(ri[:i], ri[:i])
		if !(d > PivotTolerance*math.Abs(orig)) {
			return false
		}
		l := math.Sqrt(d)
		ri[i] = l
		invDiag[i] = 1 / l
	}
	return true
}

// dot2x2 returns the inner products x·p, y·p, x·q and y·q over len(x)
// terms, each summed in increasing index order.
func dot2x2(x, y, p, q []float64) (xp, yp, xq, yq float64) {
	y, p, q = y[:len(x)], p[:len(x)], q[:len(x)]
	for k, v := range x {
		w := y[k]
		c0, c1 := p[k], q[k]
		xp += v * c0
		yp += w * c0
		xq += v * c1
		yq += w * c1
	}
	return
}

// SolveCholesky overwrites x with the solution of L·Lᵀ·x = x for the packed
// factor left by Cholesky.
func SolveCholesky(l []float64, n int, invDiag, x []float64) {
	Forward(l, n, invDiag, x)
	Backward(l, n, invDiag, x)
}

// Forward overwrites x with the solution of L·y = x for the packed factor
// left by Cholesky, four rows at a time: their inner products over the
// solved prefix share the loads of y.
func Forward(l []float64, n int, invDiag, x []float64) {
	x = x[:n]
	invDiag = invDiag[:n]
	l = l[:PackedLen(n)]
	i := 0
	for ; i+4 <= n; i += 4 {
		// Rows i..i+3 are contiguous: lengths i+1, i+2, i+3, i+4.
		blk := l[RowStart(i) : RowStart(i)+4*i+10]
		r0 := blk[:i+1]
		r1 := blk[i+1 : 2*i+3]
		r2 := blk[2*i+3 : 3*i+6]
		r3 := blk[3*i+6 : 4*i+10]
		y := x[:i]
		p0, p1, p2, p3 := r0[:len(y)], r1[:len(y)], r2[:len(y)], r3[:len(y)]
		var s0, s1, s2, s3 float64
		for k, v := range y {
			s0 += v * p0[k]
			s1 += v * p1[k]
			s2 += v * p2[k]
			s3 += v * p3[k]
		}
		y0 := (x[i] - s0) * invDiag[i]
		y1 := (x[i+1] - s1 - r1[i]*y0) * invDiag[i+1]
		y2 := (x[i+2] - s2 - r2[i]*y0 - r2[i+1]*y1) * invDiag[i+2]
		y3 := (x[i+3] - s3 - r3[i]*y0 - r3[i+1]*y1 - r3[i+2]*y2) * invDiag[i+3]
		x[i], x[i+1], x[i+2], x[i+3] = y0, y1, y2, y3
	}
	for ; i < n; i++ {
		x[i] = (x[i] - Dot(l[RowStart(i):RowStart(i)+i], x[:i])) * invDiag[i]
	}
}

// Backward overwrites y with the solution of Lᵀ·x = y for the packed factor
// left by Cholesky, from the last row up, by columns of Lᵀ (rows of L, read
// contiguously): the rows not a multiple of four first, then four at a
// time, their updates of the remaining prefix fused into one pass.
func Backward(l []float64, n int, invDiag, x []float64) {
	x = x[:n]
	invDiag = invDiag[:n]
	l = l[:PackedLen(n)]
	i := n - 1
	for ; (i+1)%4 != 0; i-- {
		xi := x[i] * invDiag[i]
		x[i] = xi
		Axpy(-xi, l[RowStart(i):RowStart(i)+i], x[:i])
	}
	for ; i >= 3; i -= 4 {
		// Rows i−3..i are contiguous: lengths i−2, i−1, i, i+1.
		o := RowStart(i - 3)
		blk := l[o : o+4*i-2]
		r0 := blk[:i-3]
		r1 := blk[i-2 : 2*i-4]
		r2 := blk[2*i-3 : 3*i-4]
		r3 := blk[3*i-3 : 4*i-3]
		x3 := x[i] * invDiag[i]
		x2 := (x[i-1] - r3[i-1]*x3) * invDiag[i-1]
		x1 := (x[i-2] - r3[i-2]*x3 - r2[i-2]*x2) * invDiag[i-2]
		x0 := (x[i-3] - r3[i-3]*x3 - r2[i-3]*x2 - r1[i-3]*x1) * invDiag[i-3]
		x[i], x[i-1], x[i-2], x[i-3] = x3, x2, x1, x0
		y := x[:i-3]
		r3, r2, r1, r0 = r3[:len(y)], r2[:len(y)], r1[:len(y)], r0[:len(y)]
		for k := range y {
			y[k] -= x3*r3[k] + x2*r2[k] + x1*r1[k] + x0*r0[k]
		}
	}
}

// Dot returns Σ a_k b_k over len(a) terms (len(b) ≥ len(a)) with four
// partial sums, a fixed summation order that does not depend on the caller.
func Dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		x, y := a[k:k+4:k+4], b[k:k+4:k+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy performs y += alpha·x over len(x) terms (len(y) ≥ len(x)).
func Axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for k, v := range x {
		y[k] += alpha * v
	}
}

// Ones returns a slice of n ones.
func Ones(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// MaxAbsLower returns the largest absolute entry of the n × n packed lower
// triangle a.
func MaxAbsLower(a []float64, n int) float64 {
	m := 0.0
	for _, v := range a[:PackedLen(n)] {
		if v < 0 {
			v = -v
		}
		if v > m {
			m = v
		}
	}
	return m
}
