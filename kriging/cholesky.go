package kriging

import "math"

// pivotTolerance is the relative size below which a Cholesky pivot counts as
// zero: the factorisation fails when the Schur complement of a diagonal entry
// falls to pivotTolerance times that entry or less, i.e. when a datum is
// predictable from the others with a relative error variance of 1e-10 or less
// (near-duplicate data, dense data under a Gaussian model without nugget).
// The solver then regularises (see Kriger).
const pivotTolerance = 1e-10

// cholesky factorises the symmetric positive definite n × n matrix held in the
// lower triangle of a (row-major, stride n) in place as a = L·Lᵀ, leaving L in
// the lower triangle and 1/L_jj in invDiag. The strict upper triangle is not
// read. It returns false, leaving a partly overwritten, when a pivot is not
// larger than pivotTolerance times its original diagonal entry (or is NaN).
//
// This is the row-oriented (Cholesky–Banachiewicz) form: every inner product
// runs over two contiguous row prefixes of L. Row i of L depends on rows
// 0..i of a only.
func cholesky(a []float64, n int, invDiag []float64) bool {
	a = a[:n*n]
	invDiag = invDiag[:n]
	i := 0
	// Rows in pairs (i, i+1) and columns in fours (j..j+3): the inner
	// products over the common prefix k < j share every load between
	// eight independent sums; the small triangles are added after.
	for ; i+2 <= n; i += 2 {
		ri := a[i*n : i*n+i+2]
		rk := a[(i+1)*n : (i+1)*n+i+2]
		j := 0
		for ; j+4 <= i; j += 4 {
			o := j * n
			r0 := a[o : o+j]
			r1 := a[o+n : o+n+j+1]
			r2 := a[o+2*n : o+2*n+j+2]
			r3 := a[o+3*n : o+3*n+j+3]
			x := ri[:j]
			y := rk[:len(x)]
			q0, q1, q2, q3 := r0[:len(x)], r1[:len(x)], r2[:len(x)], r3[:len(x)]
			var s0, s1, s2, s3, t0, t1, t2, t3 float64
			for k, v := range x {
				w := y[k]
				c0, c1, c2, c3 := q0[k], q1[k], q2[k], q3[k]
				s0 += v * c0
				s1 += v * c1
				s2 += v * c2
				s3 += v * c3
				t0 += w * c0
				t1 += w * c1
				t2 += w * c2
				t3 += w * c3
			}
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
			r0 := a[j*n : j*n+j+2]
			r1 := a[(j+1)*n : (j+1)*n+j+2]
			x := ri[:j]
			y := rk[:len(x)]
			p0, p1 := r0[:len(x)], r1[:len(x)]
			var s0, s1, t0, t1 float64
			for k, v := range x {
				w := y[k]
				c0, c1 := p0[k], p1[k]
				s0 += v * c0
				s1 += v * c1
				t0 += w * c0
				t1 += w * c1
			}
			l0 := (ri[j] - s0) * invDiag[j]
			ri[j], ri[j+1] = l0, (ri[j+1]-s1-l0*r1[j])*invDiag[j+1]
			m0 := (rk[j] - t0) * invDiag[j]
			rk[j], rk[j+1] = m0, (rk[j+1]-t1-m0*r1[j])*invDiag[j+1]
		}
		// The 2 × 2 diagonal block: the three inner products in one pass.
		var sii, ski, skk float64
		x := ri[:i]
		y := rk[:len(x)]
		for k, v := range x {
			w := y[k]
			sii += v * v
			ski += w * v
			skk += w * w
		}
		orig := ri[i]
		d := orig - sii
		if !(d > pivotTolerance*math.Abs(orig)) {
			return false
		}
		l := math.Sqrt(d)
		inv := 1 / l
		ri[i] = l
		invDiag[i] = inv
		lki := (rk[i] - ski) * inv
		rk[i] = lki
		orig = rk[i+1]
		d = orig - skk - lki*lki
		if !(d > pivotTolerance*math.Abs(orig)) {
			return false
		}
		l = math.Sqrt(d)
		rk[i+1] = l
		invDiag[i+1] = 1 / l
	}
	for ; i < n; i++ {
		ri := a[i*n : i*n+i+1]
		for j := 0; j < i; j++ {
			ri[j] = (ri[j] - dot(ri[:j], a[j*n:j*n+j])) * invDiag[j]
		}
		orig := ri[i]
		d := orig - dot(ri[:i], ri[:i])
		if !(d > pivotTolerance*math.Abs(orig)) {
			return false
		}
		l := math.Sqrt(d)
		ri[i] = l
		invDiag[i] = 1 / l
	}
	return true
}

// solveCholesky overwrites x with the solution of L·Lᵀ·x = x for the factor
// left by cholesky.
func solveCholesky(l []float64, n int, invDiag, x []float64) {
	x = x[:n]
	invDiag = invDiag[:n]
	l = l[:n*n]
	// Forward substitution L·y = x, four rows at a time: their inner
	// products over the solved prefix share the loads of y.
	i := 0
	for ; i+4 <= n; i += 4 {
		r0 := l[i*n : i*n+i+4]
		r1 := l[(i+1)*n : (i+1)*n+i+4]
		r2 := l[(i+2)*n : (i+2)*n+i+4]
		r3 := l[(i+3)*n : (i+3)*n+i+4]
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
		x[i] = (x[i] - dot(l[i*n:i*n+i], x[:i])) * invDiag[i]
	}
	// Back substitution Lᵀ·x = y from the last row up, by columns of Lᵀ
	// (rows of L, read contiguously): the rows not a multiple of four
	// first, then four at a time, their updates of the remaining prefix
	// fused into one pass.
	i = n - 1
	for ; (i+1)%4 != 0; i-- {
		xi := x[i] * invDiag[i]
		x[i] = xi
		axpy(-xi, l[i*n:i*n+i], x[:i])
	}
	for ; i >= 3; i -= 4 {
		r3 := l[i*n : i*n+i]
		r2 := l[(i-1)*n : (i-1)*n+i-1]
		r1 := l[(i-2)*n : (i-2)*n+i-2]
		r0 := l[(i-3)*n : (i-3)*n+i-3]
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

// dot returns Σ a_k b_k over len(a) terms (len(b) ≥ len(a)) with four
// partial sums, a fixed summation order that does not depend on the caller.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy performs y += alpha·x over len(x) terms (len(y) ≥ len(x)).
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for k, v := range x {
		y[k] += alpha * v
	}
}
